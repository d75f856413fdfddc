#!/usr/bin/env bash
# The native libFuzzer target on the C validator (test/fuzz/validate_fuzz.c):
# builds it with clang (-fsanitize=fuzzer,address,undefined) and runs it from
# the checked-in seed corpus (test/fuzz/corpus/) for SECONDS seconds (30 by
# default), on a scratch copy of the corpus. Prints one summary line:
#   native-fuzz: ok, N runs in S s                        (exit 0)
#   native-fuzz: FAILED ... (the crash input is saved under build/fuzz/)  (exit 1)
#   native-fuzz: not run: <why>                            (exit 3: no clang with libFuzzer)
# Extra arguments go to libFuzzer (e.g. -seed=1, or a crash file to replay);
# --probe only checks that clang can build it (exit 0, else 3). FUZZ_CFLAGS adds
# compiler flags (e.g. -fno-sanitize=alignment, to look past a known finding).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
seconds="${FUZZ_SECONDS:-30}"
if [[ "${1:-}" =~ ^[0-9]+$ ]]; then seconds=$1; shift; fi

clang=""
for c in "${CLANG:-}" clang clang-19 clang-18 clang-17 clang-16 clang-15 clang-14; do
  if [[ -n $c ]] && command -v "$c" >/dev/null 2>&1; then clang=$c; break; fi
done
out="$root/build/fuzz"
mkdir -p "$out"
if [[ -z $clang ]]; then
  echo "native-fuzz: not run: no clang found (install clang and its libFuzzer runtime, e.g. 'apt-get install clang-14 libclang-rt-14-dev')"
  exit 3
fi
echo 'int LLVMFuzzerTestOneInput(const unsigned char* d, unsigned long n) { (void)d; (void)n; return 0; }' >"$out/probe.c"
if ! "$clang" -fsanitize=fuzzer,address,undefined "$out/probe.c" -o "$out/probe" >/dev/null 2>&1; then
  echo "native-fuzz: not run: $clang cannot link -fsanitize=fuzzer (install its libFuzzer runtime, e.g. 'apt-get install libclang-rt-14-dev')"
  exit 3
fi

# --probe: only say whether the fuzzer can be built here.
if [[ "${1:-}" == "--probe" ]]; then echo "native-fuzz: can run with $clang"; exit 0; fi

bin="$out/validate_fuzz"
# Every C file of the core (one folder per concept), as build.sh compiles them.
mapfile -t core < <(find "$root/csrc" -name '*.c' -not -path "$root/csrc/examples/*" | LC_ALL=C sort)
"$clang" -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -fno-omit-frame-pointer ${FUZZ_CFLAGS:-} -I"$root/csrc" -I"$root/test/fuzz" -Wl,--wrap=AcdAddressRangeValid \
  "${core[@]}" "$root/test/fuzz/validate_fuzz.c" -o "$bin" || { echo "native-fuzz: FAILED to build"; exit 1; }

# Replaying given files: run them and stop.
if [[ $# -gt 0 && -f "${!#}" ]]; then exec "$bin" "$@"; fi

work="$out/corpus"
rm -rf "$work" && mkdir -p "$work" && cp "$root"/test/fuzz/corpus/* "$work/"
log="$out/native-fuzz.log"
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ASAN_OPTIONS=detect_leaks=1 \
  "$bin" -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=1024 \
  -artifact_prefix="$out/" -print_final_stats=1 "$@" "$work" >"$log" 2>&1
code=$?
runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
if [[ $code -eq 0 ]]; then
  echo "native-fuzz: ok, ${runs:-?} runs in ${seconds} s, $(ls "$work" | wc -l) inputs in the corpus"
  exit 0
fi
artifact=$(grep -o "Test unit written to [^ ]*" "$log" | tail -1 | sed 's/Test unit written to //')
summary=$(grep -m1 -E 'SUMMARY: |ERROR: |runtime error:|deadly signal' "$log" | head -c 300)
echo "native-fuzz: FAILED after ${runs:-?} runs: ${summary:-exit $code} (input: ${artifact:-none}; log: $log)"
exit 1
