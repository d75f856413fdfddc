#!/usr/bin/env bash
# Installs what the tests need and a fresh machine lacks: g++ and a C compiler (below), and
# Debian's chromium (driven by playwright-core; no tool downloads a browser).
# Deno and Bun come from npm (devDependencies).
set -euo pipefail
if [[ ! -x /usr/bin/chromium ]]; then
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
    echo "[test-setup] installing Debian's chromium for the browser smoke test"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq chromium >/dev/null
  else
    echo "[test-setup] error: /usr/bin/chromium is missing; install it ('sudo apt-get install chromium') for the browser smoke test" >&2
    exit 1
  fi
fi
# clang and libFuzzer for the native validator fuzzer (test/fuzz.test.ts).
bash "$(dirname "${BASH_SOURCE[0]}")/fuzz/setup-clang.sh"
# g++ for the Arrow C++ peer (scripts/cross/cpp/, against pyarrow's libarrow), and a C compiler
# for the native tests and the peers' C loaders.
for tool in g++ cc; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    package=$([[ $tool == g++ ]] && echo g++ || echo gcc)
    if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
      echo "[test-setup] installing Debian's $package for the native and cross-implementation tests"
      export DEBIAN_FRONTEND=noninteractive
      apt-get update -qq
      apt-get install -y -qq "$package" >/dev/null
    else
      echo "[test-setup] error: $tool is missing; install it ('sudo apt-get install $package') for the native and cross-implementation tests" >&2
      exit 1
    fi
  fi
done
