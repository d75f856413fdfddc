#!/usr/bin/env bash
# Regenerates the seed corpus of the native validator fuzzer
# (test/fuzz/corpus/) with test/fuzz/gen_seeds.c; the corpus is checked in.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cc="${CC:-cc}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$cc" -std=c11 -Wall -Wextra -Werror -I"$root/csrc" "$root/test/fuzz/gen_seeds.c" -o "$tmp/gen_seeds"
rm -rf "$root/test/fuzz/corpus"
mkdir -p "$root/test/fuzz/corpus"
"$tmp/gen_seeds" "$root/test/fuzz/corpus"
echo "[gen-seeds] $(ls "$root/test/fuzz/corpus" | wc -l) seeds in test/fuzz/corpus"
