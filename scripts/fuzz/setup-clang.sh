#!/usr/bin/env bash
# Installs Debian's clang and its libFuzzer runtime for the native validator
# fuzzer (scripts/fuzz/native.sh) when they are missing and this runs as root
# with apt; otherwise says what to install. Called by scripts/test-setup.sh.
set -euo pipefail
here="$(dirname "${BASH_SOURCE[0]}")"
if bash "$here/native.sh" --probe >/dev/null 2>&1; then exit 0; fi
if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
  echo "[test-setup] installing Debian's clang and libFuzzer runtime for the native fuzzer"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # Debian 12 names them clang-14 / libclang-rt-14-dev; newer releases ship plain clang.
  apt-get install -y -qq clang-14 libclang-rt-14-dev >/dev/null 2>&1 \
    || apt-get install -y -qq clang libclang-rt-dev >/dev/null
else
  echo "[test-setup] warning: clang with libFuzzer is missing; the native fuzz test will be reported as not run ('sudo apt-get install clang-14 libclang-rt-14-dev')" >&2
fi
