#!/usr/bin/env bash
# Installs what the runtime smoke tests need and a fresh machine lacks:
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
