#!/usr/bin/env bash
# Builds the C core natively, for native implementers who want its validator
# and its simulated devices in their own tests: a static and a shared library
# and the headers, from the same sources as the wasm core (every csrc/**/*.c
# but csrc/examples/ and csrc/fixtures/, which are not part of the core),
# plus the fixture dumper (csrc/fixtures/acd_dump.c: struct trees to images,
# on the core's validator and buffer rules). The portable loader
# (acd_fixture.c) stays out: implementers copy it.
#   scripts/native/build.sh [OUT]   (default build/native)
# → OUT/lib/libarrow_c_device.a, OUT/lib/libarrow_c_device.so, OUT/include/...
# CC picks the compiler (default cc).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="${1:-$root/build/native}"
cc="${CC:-cc}"
command -v "$cc" >/dev/null 2>&1 || { echo "[native] error: no C compiler '$cc' (install one: 'sudo apt-get install gcc')" >&2; exit 1; }

# Two builds into one OUT (parallel test files): one at a time.
mkdir -p "$out"
exec 9>"$out/.build.lock"
command -v flock >/dev/null 2>&1 && flock 9

mapfile -t sources < <(cd "$root" && { find csrc -name '*.c' -not -path 'csrc/examples/*' -not -path 'csrc/fixtures/*'; echo csrc/fixtures/acd_dump.c; } | LC_ALL=C sort)
rm -rf "$out/obj" "$out/lib" "$out/include"
mkdir -p "$out/obj" "$out/lib" "$out/include"
objs=()
for src in "${sources[@]}"; do
  rel=${src#csrc/}
  obj="$out/obj/${rel//\//_}"
  obj=${obj%.c}.o
  "$cc" -std=c11 -O2 -fPIC -Wall -Wextra -Werror -I"$root/csrc" -c "$root/$src" -o "$obj"
  objs+=("$obj")
done
ar rcs "$out/lib/libarrow_c_device.a" "${objs[@]}"
"$cc" -shared -o "$out/lib/libarrow_c_device.so" "${objs[@]}"
# The headers at their csrc/ paths: arrow_c_device.h and one per concept folder.
cp "$root/csrc/arrow_c_device.h" "$out/include/"
for dir in abi model validate device stream; do
  mkdir -p "$out/include/$dir"
  cp "$root/csrc/$dir/"*.h "$out/include/$dir/"
done
mkdir -p "$out/include/fixtures"
cp "$root/csrc/fixtures/acd_dump.h" "$out/include/fixtures/"
echo "[native] ${#sources[@]} C files -> $out/lib/libarrow_c_device.a, $out/lib/libarrow_c_device.so, $out/include/"
