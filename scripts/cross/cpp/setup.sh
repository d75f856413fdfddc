#!/usr/bin/env bash
# Builds the Arrow C++ peer of the conformance matrix (docs/conformance.md,
# "Arrow C++ async device stream") against the libarrow and headers that
# pyarrow's wheel ships (scripts/cross/setup.sh installs it into
# build/venv-cross), into build/cpp-cross/:
#   cpp_async_consumer  arrow::CreateAsyncDeviceStreamHandler consumes the
#                       portable C loader's async scripts (async_consumer.cc
#                       + csrc/fixtures/acd_fixture.c, compiled as C);
#   cpp_async_producer  arrow::ExportAsyncRecordBatchReader drives the C
#                       core's async consumer (async_producer.cc + the core
#                       built natively by scripts/native/build.sh).
# Idempotent: skipped when its inputs (these sources, csrc/, the wheel's
# libarrow, the compilers) are unchanged. Exits 1 with what to install when
# g++ or cc is missing.
#   scripts/cross/cpp/setup.sh   → then build/cpp-cross/cpp_async_consumer CORPUS_DIR CASE...
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
OUT=$ROOT/build/cpp-cross
PY=$ROOT/build/venv-cross/bin/python

say() { printf '[cpp-cross] %s\n' "$*"; }
die() { printf '[cpp-cross] error: %s\n' "$*" >&2; exit 1; }

command -v g++ >/dev/null 2>&1 ||
  die "g++ not found. Install a C++20 compiler: 'sudo apt-get install g++' on Debian/Ubuntu (GCC 11 or newer)."
CC=${CC:-cc}
command -v "$CC" >/dev/null 2>&1 || die "no C compiler '$CC'. Install one: 'sudo apt-get install gcc'."

# pyarrow's wheel (its own lock: the peers' tests call it in parallel).
bash "$ROOT/scripts/cross/setup.sh"

# Jest runs the peers' tests in parallel: one build at a time.
mkdir -p "$OUT"
exec 9>"$ROOT/build/.cpp-cross.lock"
command -v flock >/dev/null 2>&1 && flock 9

mapfile -t wheel < <("$PY" -c 'import pyarrow as pa; print(pa.get_include()); print(pa.get_library_dirs()[0]); print(pa.__version__)') ||
  die "$PY cannot import pyarrow (run scripts/cross/setup.sh)."
INCLUDE=${wheel[0]}
LIBDIR=${wheel[1]}
VERSION=${wheel[2]}
LIBARROW=$(ls "$LIBDIR"/libarrow.so.[0-9]* 2>/dev/null | grep -E '/libarrow\.so\.[0-9]+$' | head -1) ||
  true
[[ -n $LIBARROW && -f $INCLUDE/arrow/c/bridge.h ]] ||
  die "pyarrow $VERSION's wheel has no libarrow.so.N or arrow/c/bridge.h under $LIBDIR (a wheel without its C++ library?)."

# The wheel's libstdc++ ABI: std::string in its exported signatures is the
# C++11 one (tagged [abi:cxx11]) on manylinux_2_28 wheels, the old one on
# manylinux2014's devtoolset. Compile with the one libarrow exports.
symbols=$(nm -D --defined-only "$LIBARROW" 2>/dev/null || true)
if grep -q '_ZNK5arrow6Status8ToStringB5cxx11Ev' <<<"$symbols"; then
  ABI=1
elif grep -q '_ZNK5arrow6Status8ToStringEv' <<<"$symbols"; then
  ABI=0
else
  die "cannot tell the libstdc++ ABI of $LIBARROW (no arrow::Status::ToString symbol; is binutils' nm installed?)."
fi

# Everything the build depends on, hashed: unchanged → nothing to do.
stamp=$( {
  g++ --version | head -1
  "$CC" --version | head -1
  echo "$LIBARROW $ABI $VERSION"
  stat -c '%s %Y' "$LIBARROW"
  cd "$ROOT"
  find scripts/cross/cpp scripts/native/build.sh csrc -type f \( -name '*.c' -o -name '*.h' -o -name '*.cc' -o -name '*.sh' \) \
    -not -path 'csrc/examples/*' | LC_ALL=C sort | xargs sha256sum
} | sha256sum | cut -d' ' -f1)
if [[ -x $OUT/cpp_async_consumer && -x $OUT/cpp_async_producer && "$(cat "$OUT/.stamp" 2>/dev/null)" == "$stamp" ]]; then
  say "up to date: $OUT (Arrow C++ $VERSION from pyarrow's wheel)"
  exit 0
fi
rm -f "$OUT/.stamp"

start=$SECONDS
say "building the C core natively into $OUT/native"
bash "$ROOT/scripts/native/build.sh" "$OUT/native" >/dev/null || die "scripts/native/build.sh failed (see above)."
say "compiling the fixture loader (C99)"
"$CC" -std=c99 -O2 -Wall -Wextra -Werror -I"$ROOT/csrc" -c "$ROOT/csrc/fixtures/acd_fixture.c" -o "$OUT/acd_fixture.o"

CXXFLAGS=(-std=c++20 -O2 -Wall -D_GLIBCXX_USE_CXX11_ABI=$ABI -isystem "$INCLUDE" -pthread)
LINK=("$LIBARROW" "-Wl,-rpath,$LIBDIR")
say "compiling cpp_async_consumer and cpp_async_producer against Arrow C++ $VERSION ($LIBARROW, _GLIBCXX_USE_CXX11_ABI=$ABI)"
g++ "${CXXFLAGS[@]}" -I"$ROOT/csrc" "$HERE/async_consumer.cc" "$OUT/acd_fixture.o" "${LINK[@]}" -o "$OUT/cpp_async_consumer" ||
  die "compiling async_consumer.cc failed (see above)."
g++ "${CXXFLAGS[@]}" -I"$OUT/native/include" -I"$ROOT/csrc" "$HERE/async_producer.cc" "$OUT/acd_fixture.o" "$OUT/native/lib/libarrow_c_device.a" "${LINK[@]}" \
  -o "$OUT/cpp_async_producer" || die "compiling async_producer.cc failed (see above)."
echo "$stamp" >"$OUT/.stamp"
say "built in $((SECONDS - start)) s"
