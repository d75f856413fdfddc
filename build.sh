#!/usr/bin/env bash
# Builds everything: the struct layout tables (from emcc and the native C
# compiler), the wasm core, the type declarations and dist/.
#   ./build.sh            all of it
#   ./build.sh core       layout tables and the wasm core only
# Installs what is missing where it can (npm packages; Debian's emscripten
# when running as root with apt), and otherwise says exactly what to install.
set -euo pipefail
cd "$(dirname "$0")"
what=${1:-all}

say() { printf '[build] %s\n' "$*"; }
die() { printf '[build] error: %s\n' "$*" >&2; exit 1; }

# ---- npm packages ---------------------------------------------------------
if [[ ! -d node_modules/apache-arrow || ! -d node_modules/acorn ]]; then
  say "installing npm packages"
  npm install --no-audit --no-fund --loglevel=error
fi
# Emscripten's optimizer loads acorn from NODE_PATH.
export NODE_PATH="$PWD/node_modules${NODE_PATH:+:$NODE_PATH}"

# ---- emcc -----------------------------------------------------------------
if ! command -v emcc >/dev/null 2>&1; then
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
    say "emcc not found: installing Debian's emscripten package"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq emscripten >/dev/null
  else
    die "emcc not found. Install Emscripten: 'sudo apt-get install emscripten' on Debian/Ubuntu, or emsdk (https://emscripten.org/docs/getting_started/downloads.html), then run this again."
  fi
fi

# ---- native C compiler (for the LP64 layout table) --------------------------
native_cc=""
for c in "${CC:-}" cc gcc clang clang-19 clang-18 clang-17 clang-16 clang-15 clang-14; do
  if [[ -n $c ]] && command -v "$c" >/dev/null 2>&1; then native_cc=$c; break; fi
done
[[ -n $native_cc ]] || die "no native C compiler found (cc, gcc or clang); install one, e.g. 'apt-get install gcc'"

mkdir -p build/layout ts/abi/generated

# ---- up to date? ------------------------------------------------------------
# Everything below depends only on these inputs: when their hash matches the
# last successful build's and its outputs exist, there is nothing to do.
inputs_hash() {
  { git ls-files -co --exclude-standard -- csrc ts scripts build.sh rollup.config.mjs tsconfig.json package.json package-lock.json \
      2>/dev/null || find csrc ts scripts build.sh rollup.config.mjs tsconfig.json package.json package-lock.json -type f; } \
    | grep -v '^ts/abi/generated/' | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -d' ' -f1
}
stamp=build/.stamp-$what
hash=$(inputs_hash)
if [[ -f $stamp && $(cat "$stamp") == "$hash" && -f ts/abi/generated/core.js && -f ts/abi/generated/layout.ts && -f ts/abi/generated/wasm-table.ts \
      && ( $what == core || ( -f dist/index.mjs && -f dist/lib/libarrow_c_device.a && -f dist/playground/index.html ) ) ]]; then
  say "up to date (inputs unchanged since the last build)"
  exit 0
fi

# ---- layout tables ----------------------------------------------------------
say "layout tables: $native_cc (native) and emcc (wasm32)"
"$native_cc" -std=c11 -Wall -Wextra -Werror -DACD_LAYOUT_MAIN -Icsrc csrc/abi/layout.c -o build/layout/layout-native
build/layout/layout-native > build/layout/native.json
emcc -std=c11 -Wall -Wextra -Werror -DACD_LAYOUT_MAIN -sSINGLE_FILE -sENVIRONMENT=node \
  -Icsrc csrc/abi/layout.c -o build/layout/layout-wasm32.cjs
node build/layout/layout-wasm32.cjs > build/layout/wasm32.json
node scripts/gen-layout.mjs build/layout/wasm32.json build/layout/native.json ts/abi/generated/layout.ts

# ---- wasm core --------------------------------------------------------------
# Every C file under csrc/ (one folder per concept: abi, model, validate,
# device, stream; csrc/examples/ and the fixture loader csrc/fixtures/ are not
# part of the core), included from -Icsrc.
mapfile -t sources < <(find csrc -name '*.c' -not -path 'csrc/examples/*' -not -path 'csrc/fixtures/*' | LC_ALL=C sort)
say "wasm core: ${#sources[@]} C files and the embind bindings"
mkdir -p build/core
objs=()
# Object names come from the path (csrc/abi/array.c -> abi_array.o): several
# folders have a file of the same name.
for src in "${sources[@]}"; do
  rel=${src#csrc/}
  obj=build/core/${rel//\//_}
  obj=${obj%.c}.o
  # The slot scans use wasm SIMD (csrc/validate/slots.c: 3 to 10 times
  # faster than scalar loops), which Node, Deno, Bun and every current browser
  # run; the rest of the core stays scalar.
  simd=()
  [[ $src == csrc/validate/slots.c ]] && simd=(-msimd128)
  emcc -std=c11 -O2 "${simd[@]}" -Wall -Wextra -Werror -Icsrc -c "$src" -o "$obj"
  objs+=("$obj")
done
# embind exports: one bindings.cpp per concept folder (abi, device, stream).
mapfile -t bindings < <(find csrc -name '*.cpp' -not -path 'csrc/examples/*' | LC_ALL=C sort)
for src in "${bindings[@]}"; do
  rel=${src#csrc/}
  obj=build/core/${rel//\//_}
  obj=${obj%.cpp}.cpp.o
  emcc -std=c++17 -O2 -Wall -Wextra -Werror -Icsrc -c "$src" -o "$obj"
  objs+=("$obj")
done
# -sDYNAMIC_EXECUTION=0: embind makes its invokers and named functions without
# eval or new Function, so the core runs under a Content-Security-Policy
# without 'unsafe-eval' (only 'wasm-unsafe-eval'; test/csp.test.ts).
emcc -O2 --bind "${objs[@]}" -o build/core/core.mjs -sDYNAMIC_EXECUTION=0 \
  -sMODULARIZE -sEXPORT_ES6 -sEXPORT_NAME=createAcdCore -sENVIRONMENT=web,worker -sSINGLE_FILE \
  -sWASM_BIGINT -sALLOW_MEMORY_GROWTH -sALLOW_TABLE_GROWTH -sINITIAL_MEMORY=16MB \
  -sMAXIMUM_MEMORY=2GB -sFILESYSTEM=0 -sEXPORTED_RUNTIME_METHODS=addFunction,removeFunction \
  -sINCOMING_MODULE_JS_API=wasmBinary,print,printErr
node scripts/gen-core.mjs build/core/core.mjs ts/abi/generated/core.js
# Each function table slot's signature, so that callbacks read from structs are
# checked before C calls them (ts/abi/wasm-table.ts, csrc/abi/callback.c).
node scripts/gen-wasm-table.mjs build/core/core.mjs ts/abi/wasm-table.ts ts/abi/generated/wasm-table.ts

# ---- the static library (linked mode) -----------------------------------------
# The same objects as an archive, for C/C++ projects that link the core into
# their own module (README, "Linking the core into your own C/C++ module"),
# and the headers they include, at the same paths as under csrc/ (bindings.h
# is the bindings' own). Copied into dist/lib and dist/include below.
rm -rf build/lib build/include
mkdir -p build/lib build/include
emar rcs build/lib/libarrow_c_device.a "${objs[@]}"
mapfile -t headers < <(find csrc -name '*.h' -not -path 'csrc/examples/*' -not -path 'csrc/fixtures/*' -not -name bindings.h | LC_ALL=C sort)
for h in "${headers[@]}"; do
  rel=${h#csrc/}
  mkdir -p "build/include/$(dirname "$rel")"
  cp "$h" "build/include/$rel"
done
[[ $what == core ]] && { echo "$hash" > "$stamp"; say "core done"; exit 0; }

# ---- types and dist ---------------------------------------------------------
# dist/: each entry of package.json "exports" as ESM (sharing dist/chunks/)
# and CJS (the ESM through require(esm)) with .d.ts and .d.cts, the CLI, and
# the playground (dist/playground/: its page, style sheet, its bundle over
# the same chunks and apache-arrow's browser build); rollup.config.mjs.
say "type check and declarations (tsc)"
rm -rf build/types
npx --no-install tsc -p tsconfig.json
say "bundle (rollup)"
# Bundle into a staging folder and swap it in, so that a test reading dist/
# meanwhile never sees it half-written.
rm -rf build/dist-staging
ACD_DIST=build/dist-staging npx --no-install rollup -c rollup.config.mjs --silent
cp -r build/lib build/include build/dist-staging/
rm -rf build/dist-old
[[ -d dist ]] && mv dist build/dist-old
mv build/dist-staging dist
rm -rf build/dist-old
echo "$hash" > "$stamp"
say "done: dist/ $(du -sh dist | cut -f1)"
