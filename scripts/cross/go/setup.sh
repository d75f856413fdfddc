#!/usr/bin/env bash
# Builds the arrow-go peer of the conformance matrix (docs/conformance.md):
# build/go-cross/peer_arrow_go (this Go module: arrow-go v18.8.0's cdata
# package through cgo, with the portable C loader compiled in and the native
# core library linked, for the dumper of its dump mode) and
# build/go-cross/arrow-json-integration-test (arrow-go's own reader of the
# integration JSON, for the cases without an expected IPC stream). Modules
# come from the Go module proxy, pinned by go.mod and go.sum. go build is
# incremental: with a warm build cache a rebuild takes seconds; a cold one
# (first run on a machine) a few minutes. Prints what it does; exits 1 with
# what to install when Go or a C compiler is missing.
#   scripts/cross/go/setup.sh   → then build/go-cross/peer_arrow_go CORPUS_DIR
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
OUT=$ROOT/build/go-cross

say() { printf '[go-cross] %s\n' "$*"; }
die() { printf '[go-cross] error: %s\n' "$*" >&2; exit 1; }

command -v go >/dev/null 2>&1 ||
  die "go not found. Install Go 1.25 or newer (go.mod needs it): 'sudo apt-get install golang-go' on Debian/Ubuntu if its version is recent enough, else the official Go release."
version=$(go env GOVERSION)
[[ $version =~ ^go1\.([0-9]+) ]] || die "cannot read Go's version ('$version')."
(( BASH_REMATCH[1] >= 25 )) || die "$version is too old: arrow-go v18.8.0 needs Go 1.25 or newer."
export CGO_ENABLED=1
cc=$(go env CC)
command -v "${cc%% *}" >/dev/null 2>&1 ||
  die "the C compiler cgo uses ('$cc') was not found. Install one ('sudo apt-get install gcc') or set CC."

mkdir -p "$OUT"
# Jest files run this in parallel: one at a time.
exec 9>"$OUT/.setup.lock"
command -v flock >/dev/null 2>&1 && flock 9
# The dump mode (dump.go) links the native core library, for its dumper, built
# here into $OUT/native (build/native stays the user's). Go's build cache does
# not see a library's content change, so it is linked from a path named after
# its hash: a new library, a new link.
bash "$ROOT/scripts/native/build.sh" "$OUT/native" >/dev/null || die "scripts/native/build.sh failed (see the errors above)."
hash=$(sha256sum "$OUT/native/lib/libarrow_c_device.a" | cut -c1-16)
find "$OUT" -maxdepth 1 -name 'core-*' ! -name "core-$hash" -exec rm -rf {} +
mkdir -p "$OUT/core-$hash"
cp "$OUT/native/lib/libarrow_c_device.a" "$OUT/core-$hash/libarrow_c_device.a"
export CGO_LDFLAGS="$OUT/core-$hash/libarrow_c_device.a"
cd "$HERE"
start=$SECONDS
say "building $OUT/peer_arrow_go with $version (arrow-go $(sed -n 's/^require github.com\/apache\/arrow-go\/v18 //p' go.mod), cgo: $cc)"
go build -buildvcs=false -o "$OUT/peer_arrow_go" . ||
  die "go build failed (no access to the Go module proxy for a cold module cache? see the errors above)."
say "building $OUT/arrow-json-integration-test (arrow-go's integration JSON reader)"
go build -buildvcs=false -o "$OUT/arrow-json-integration-test" github.com/apache/arrow-go/v18/arrow/ipc/cmd/arrow-json-integration-test ||
  die "go build of arrow-json-integration-test failed (see the errors above)."
say "built in $((SECONDS - start)) s"
