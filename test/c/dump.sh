#!/usr/bin/env bash
# Builds the fixture dumper (csrc/fixtures/acd_dump.c) with the C core and the
# portable loader, and its tests (test/c/test_dump.c), natively under
# ASan/UBSan with the leak check when the compiler has them, and runs them.
# Directories given (the LP64 images of `arrow-c-device fixtures`) are dumped
# again image by image. With --wasm (first), the same tests compiled by emcc
# and run by node: the dumper's wasm32 images (4-byte pointers), reads bounded
# by the linear memory; directories given are then wasm32 images.
# Prints "c-dump: N passed, 0 failed".
#   bash test/c/dump.sh [--wasm] [DIR]...
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cc="${CC:-cc}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

mapfile -t files < <(find "$root/csrc" -name '*.c' -not -path "$root/csrc/examples/*" -not -path "$root/csrc/fixtures/*" | LC_ALL=C sort)
if [[ "${1:-}" == "--wasm" ]]; then
  shift
  emcc -std=c11 -Wall -Wextra -Werror -O1 -sSINGLE_FILE=1 -sENVIRONMENT=node -sALLOW_MEMORY_GROWTH -sNODERAWFS=1 \
    -I"$root/csrc" "${files[@]}" "$root/csrc/fixtures/acd_dump.c" "$root/csrc/fixtures/acd_fixture.c" \
    "$root/test/c/test_dump.c" -o "$tmp/test_dump.js"
  node "$tmp/test_dump.js" "$@"
  exit
fi
flags=(-std=c11 -Wall -Wextra -Wpedantic -Werror -O1 -g -I"$root/csrc")
sanitize=(-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
echo 'int main(void) { return 0; }' >"$tmp/probe.c"
if "$cc" "${sanitize[@]}" "$tmp/probe.c" -o "$tmp/probe" >/dev/null 2>&1 && "$tmp/probe"; then
  flags+=("${sanitize[@]}")
fi
"$cc" "${flags[@]}" "${files[@]}" "$root/csrc/fixtures/acd_dump.c" "$root/csrc/fixtures/acd_fixture.c" \
  "$root/test/c/test_dump.c" -o "$tmp/test_dump"
ASAN_OPTIONS=detect_leaks=1 "$tmp/test_dump" "$@"
