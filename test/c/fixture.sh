#!/usr/bin/env bash
# Builds the portable fixture loader (csrc/fixtures/) with its tests
# (test/c/test_fixture.c) as C99 with -Wall -Wextra -Werror, natively, under
# ASan/UBSan with the leak check when the compiler has them, and runs them.
# Image files given as arguments (or every *.acdfix under a directory given)
# are also loaded and every root they hand out released, with 0 leaks.
# With --wasm32 DIR, the same tests also compiled by emcc (4-byte pointers)
# and run by node, loading DIR's wasm32 images.
# Prints "c-fixture: N passed, 0 failed" and "c-fixture-async: ..." (twice
# with --wasm32).
#   bash test/c/fixture.sh [--wasm32 DIR] [IMAGE.acdfix | DIR]...
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cc="${CC:-cc}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

flags=(-std=c99 -Wall -Wextra -Wpedantic -Werror -O1 -g -I"$root/csrc")
sanitize=(-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
echo 'int main(void) { return 0; }' >"$tmp/probe.c"
if "$cc" "${sanitize[@]}" "$tmp/probe.c" -o "$tmp/probe" >/dev/null 2>&1 && "$tmp/probe"; then
  flags+=("${sanitize[@]}")
  echo "c-fixture: built with ASan/UBSan (leak check on)"
fi
# The loader alone, as an implementer compiles it: C99, no other source.
"$cc" "${flags[@]}" -c "$root/csrc/fixtures/acd_fixture.c" -o "$tmp/acd_fixture.o"
"$cc" "${flags[@]}" "$root/csrc/fixtures/acd_fixture.c" "$root/test/c/test_fixture.c" -o "$tmp/test_fixture"
"$cc" "${flags[@]}" "$root/csrc/fixtures/acd_fixture.c" "$root/test/c/test_fixture_async.c" -o "$tmp/test_fixture_async"

images=()
wasm32=""
while [[ $# -gt 0 ]]; do
  arg=$1
  shift
  if [[ $arg == --wasm32 ]]; then
    wasm32=$1
    shift
  elif [[ -d $arg ]]; then
    mapfile -t found < <(find "$arg" -name '*.acdfix' | LC_ALL=C sort)
    images+=("${found[@]}")
  else
    images+=("$arg")
  fi
done
ASAN_OPTIONS=detect_leaks=1 "$tmp/test_fixture" "${images[@]}"
# The async producer: a consumer's handler driven by a script ("c-fixture-async: ...").
ASAN_OPTIONS=detect_leaks=1 "$tmp/test_fixture_async"

if [[ -n $wasm32 ]]; then
  wasm=(-std=c99 -Wall -Wextra -Wpedantic -Werror -O1 -sSINGLE_FILE=1 -sENVIRONMENT=node -sALLOW_MEMORY_GROWTH -I"$root/csrc")
  emcc "${wasm[@]}" -sNODERAWFS=1 "$root/csrc/fixtures/acd_fixture.c" "$root/test/c/test_fixture.c" -o "$tmp/test_fixture.js"
  emcc "${wasm[@]}" "$root/csrc/fixtures/acd_fixture.c" "$root/test/c/test_fixture_async.c" -o "$tmp/test_fixture_async.js"
  mapfile -t found < <(find "$wasm32" -name '*.acdfix' | LC_ALL=C sort)
  node "$tmp/test_fixture.js" "${found[@]}"
  node "$tmp/test_fixture_async.js"
fi
