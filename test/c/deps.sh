#!/usr/bin/env bash
# Checks the call graph of the C core (issue 10): compiles every csrc/ file
# natively (cc -c), then matches each object's undefined symbols (nm: U) with
# the file that defines them (T, D, B, R). Prints the folder graph and fails
# when a folder calls a folder above it in abi < model < validate < device <
# stream, or when files call each other in a cycle (tsort finds the loops).
#   bash test/c/deps.sh          the folder graph, and "c-deps: ok"
#   bash test/c/deps.sh --files  also every file-to-file edge
#   bash test/c/deps.sh --wasm   the same with emcc and llvm-nm, the embind
#                                bindings (each folder's bindings.cpp) included
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cc="${CC:-cc}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

order=(abi model validate device stream)
rank() { local i; for i in "${!order[@]}"; do [[ ${order[$i]} == "$1" ]] && echo "$i" && return; done; echo 99; }

wasm=0
for arg in "$@"; do [[ $arg == --wasm ]] && wasm=1; done
cd "$root"
pattern='*.c'
[[ $wasm -eq 1 ]] && pattern='*.c*'
mapfile -t files < <(find csrc -name "$pattern" -not -path 'csrc/examples/*' -not -path 'csrc/fixtures/*' | LC_ALL=C sort)
: >"$tmp/syms"
for f in "${files[@]}"; do
  rel=${f#csrc/}
  name=${rel%.c}
  obj="$tmp/${name//\//_}.o"
  if [[ $wasm -eq 1 && $f == *.cpp ]]; then
    emcc -std=c++17 -Icsrc -c "$f" -o "$obj"
  elif [[ $wasm -eq 1 ]]; then
    emcc -std=c11 -Icsrc -c "$f" -o "$obj"
  else
    "$cc" -std=c11 -Icsrc -c "$f" -o "$obj"
  fi
  "$([[ $wasm -eq 1 ]] && echo llvm-nm || echo nm)" "$obj" 2>/dev/null | awk -v f="$name" '$1 == "U" { print "U", f, $2 } NF == 3 && $2 ~ /^[TDBR]$/ { print "D", f, $3 }' >>"$tmp/syms"
done
# file -> file edges (the caller, the file that defines the callee).
awk '$1 == "D" { def[$3] = $2 } $1 == "U" { use[NR] = $2 " " $3 }
     END { for (k in use) { split(use[k], a, " "); if ((a[2] in def) && def[a[2]] != a[1]) print a[1], def[a[2]] } }' \
  "$tmp/syms" | LC_ALL=C sort -u >"$tmp/edges"

[[ " $* " == *" --files "* ]] && { echo "files (caller callee):"; sed 's/^/  /' "$tmp/edges"; }

status=0
echo "folders (caller -> callee, number of file edges):"
awk '{ split($1, a, "/"); split($2, b, "/"); if (a[1] != b[1]) print a[1], b[1] }' "$tmp/edges" \
  | LC_ALL=C sort | uniq -c | while read -r n from to; do
  echo "  $from -> $to ($n)"
  if (( $(rank "$from") < $(rank "$to") )); then
    echo "c-deps: FAILED: $from calls up into $to:" >&2
    awk -v f="$from" -v t="$to" 'index($1, f "/") == 1 && index($2, t "/") == 1 { print "  " $1 " -> " $2 }' "$tmp/edges" >&2
    exit 1
  fi
done || status=1

# Cycles between files: tsort prints the files of each loop on stderr.
if ! tsort "$tmp/edges" >/dev/null 2>"$tmp/tsort"; then
  echo "c-deps: FAILED: files call each other in a cycle:" >&2
  cat "$tmp/tsort" >&2
  status=1
fi
[[ $status -eq 0 ]] && echo "c-deps: ok (${#files[@]} files, $(wc -l <"$tmp/edges") file edges, no call up a folder, no file cycle)"
exit $status
