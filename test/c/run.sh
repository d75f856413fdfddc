#!/usr/bin/env bash
# Builds the C core natively together with test/c/test_core.c and
# test/c/test_device.c and runs them, under AddressSanitizer and
# UndefinedBehaviorSanitizer when the compiler supports them; then builds and
# runs the spec's int32 device array example (csrc/examples/) against the
# simulated CUDA runtime. Prints the summary lines ("c-core: N passed, 0
# failed", "c-device: N passed, 0 failed"), the example's "c-example:" lines,
# and first "c-deps: ok ..." (test/c/deps.sh: the folders' call graph); then
# the fixture dumper's tests (test/c/dump.sh, "c-dump: ...").
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cc="${CC:-cc}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# Every C file of the core, as build.sh compiles them for wasm (csrc/ has one
# folder per concept; csrc/examples/ and the fixture loader csrc/fixtures/,
# tested by test/c/fixture.sh, are not part of the core).
mapfile -t files < <(find "$root/csrc" -name '*.c' -not -path "$root/csrc/examples/*" -not -path "$root/csrc/fixtures/*" | LC_ALL=C sort)
examples=("$root"/csrc/examples/*.c)

flags=(-std=c11 -Wall -Wextra -Wpedantic -Werror -O1 -g -I"$root/csrc")
sanitize=(-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
echo 'int main(void) { return 0; }' >"$tmp/probe.c"
if "$cc" "${sanitize[@]}" "$tmp/probe.c" -o "$tmp/probe" >/dev/null 2>&1 && "$tmp/probe"; then
  flags+=("${sanitize[@]}")
fi

# No folder of csrc/ calls one above it, no files call each other in a cycle
# ("c-deps: ok ...", test/c/deps.sh).
bash "$root/test/c/deps.sh" >"$tmp/deps.txt" 2>&1 || { cat "$tmp/deps.txt"; exit 1; }
tail -1 "$tmp/deps.txt"

"$cc" "${flags[@]}" "${files[@]}" "$root/test/c/test_core.c" -o "$tmp/test_core"
"$tmp/test_core"
"$cc" "${flags[@]}" -DACD_EXAMPLE_NO_MAIN "${files[@]}" "${examples[@]}" \
  "$root/test/c/test_device.c" -o "$tmp/test_device"
"$tmp/test_device"
"$cc" "${flags[@]}" "${files[@]}" "${examples[@]}" -o "$tmp/int32_device_array"
"$tmp/int32_device_array"
# The streams: pull streams and the async device stream ("c-stream: ...").
"$cc" "${flags[@]}" "${files[@]}" "$root/test/c/test_stream.c" -o "$tmp/test_stream"
"$tmp/test_stream"
# Issue 9: callbacks, DAG trees and misaligned structs ("c-issue9: ...").
"$cc" "${flags[@]}" "${files[@]}" "$root/test/c/test_issue9.c" -o "$tmp/test_issue9"
# Issue 11: arrays in another memory, through the foreign window ("c-window: ...").
"$cc" "${flags[@]}" "${files[@]}" "$root/test/c/test_window.c" -o "$tmp/test_window"
"$tmp/test_window"
"$tmp/test_issue9"
# The fixture dumper: trees to images and back through the loader ("c-dump: ...").
bash "$root/test/c/dump.sh"

# With --wasm, the same tests compiled by emcc and run by node, where
# AcdAddressRangeValid really bounds reads by the linear memory's size and
# device addresses are the wasm32 ones (>= 2^31).
if [[ "${1:-}" == "--wasm" ]]; then
  wasm=(-std=c11 -Wall -Wextra -Werror -O1 -sSINGLE_FILE=1 -sENVIRONMENT=node -I"$root/csrc")
  emcc "${wasm[@]}" "${files[@]}" "$root/test/c/test_core.c" -o "$tmp/test_core.js"
  node "$tmp/test_core.js"
  emcc "${wasm[@]}" -DACD_EXAMPLE_NO_MAIN "${files[@]}" "${examples[@]}" \
    "$root/test/c/test_device.c" -o "$tmp/test_device.js"
  node "$tmp/test_device.js"
  emcc "${wasm[@]}" "${files[@]}" "${examples[@]}" -o "$tmp/int32_device_array.js"
  node "$tmp/int32_device_array.js"
  emcc "${wasm[@]}" "${files[@]}" "$root/test/c/test_stream.c" -o "$tmp/test_stream.js"
  node "$tmp/test_stream.js"
  emcc "${wasm[@]}" "${files[@]}" "$root/test/c/test_issue9.c" -o "$tmp/test_issue9.js"
  node "$tmp/test_issue9.js"
  emcc "${wasm[@]}" "${files[@]}" "$root/test/c/test_window.c" -o "$tmp/test_window.js"
  node "$tmp/test_window.js"
  bash "$root/test/c/dump.sh" --wasm
fi
