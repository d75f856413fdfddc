#!/usr/bin/env bash
# Builds the C core natively together with test/c/test_core.c and runs it,
# under AddressSanitizer and UndefinedBehaviorSanitizer when the compiler
# supports them. Prints the test's summary line ("c-core: N passed, 0 failed").
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cc="${CC:-cc}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# Every C file of the core, as build.sh compiles them for wasm.
files=("$root"/csrc/*.c)

flags=(-std=c11 -Wall -Wextra -Wpedantic -Werror -O1 -g -I"$root/csrc")
sanitize=(-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
echo 'int main(void) { return 0; }' >"$tmp/probe.c"
if "$cc" "${sanitize[@]}" "$tmp/probe.c" -o "$tmp/probe" >/dev/null 2>&1 && "$tmp/probe"; then
  flags+=("${sanitize[@]}")
fi

"$cc" "${flags[@]}" "${files[@]}" "$root/test/c/test_core.c" -o "$tmp/test_core"
"$tmp/test_core"

# With --wasm, the same tests compiled by emcc and run by node, where
# AcdAddressRangeValid really bounds reads by the linear memory's size.
if [[ "${1:-}" == "--wasm" ]]; then
  emcc -std=c11 -Wall -Wextra -Werror -O1 -sSINGLE_FILE=1 -sENVIRONMENT=node -I"$root/csrc" \
    "${files[@]}" "$root/test/c/test_core.c" -o "$tmp/test_core.js"
  node "$tmp/test_core.js"
fi
