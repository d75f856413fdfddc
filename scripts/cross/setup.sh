#!/usr/bin/env bash
# Sets up the Python side of the cross-implementation fixtures: a virtualenv
# in build/venv-cross with the peers from PyPI: pyarrow, nanoarrow and
# arro3-core (arrow-rs for Python). Idempotent: a venv that already has the
# pinned versions is reused as is. Prints what it did; exits 1 with what to
# install when python3, venv or pip is missing.
#   scripts/cross/setup.sh        → then build/venv-cross/bin/python
set -euo pipefail
cd "$(dirname "$0")/../.."

PYARROW_VERSION=26.0.1
NANOARROW_VERSION=0.9.0
ARRO3_VERSION=0.9.1
PEERS="nanoarrow==$NANOARROW_VERSION arro3-core==$ARRO3_VERSION"
VENV=build/venv-cross
PY=$VENV/bin/python

say() { printf '[cross] %s\n' "$*"; }
die() { printf '[cross] error: %s\n' "$*" >&2; exit 1; }

# Jest runs the peer tests in parallel, each calling this first: one at a time builds the venv.
mkdir -p build
exec 9>build/.venv-cross.lock
command -v flock >/dev/null 2>&1 && flock 9

# Whether the venv has every pinned peer besides pyarrow (by its distribution's version).
peers_pinned() {
  "$PY" -c "import importlib.metadata as m, sys; sys.exit(any(m.version(n) != v for n, v in (p.split('==') for p in sys.argv[1:])))" $PEERS 2>/dev/null
}

if [[ -x $PY ]] && "$PY" -c "import pyarrow, sys; sys.exit(pyarrow.__version__ != '$PYARROW_VERSION')" 2>/dev/null && peers_pinned; then
  say "reusing $VENV (pyarrow $PYARROW_VERSION, $PEERS)"
  exit 0
fi

command -v python3 >/dev/null 2>&1 ||
  die "python3 not found. Install Python 3.9 or newer with venv and pip: 'sudo apt-get install python3 python3-venv python3-pip' on Debian/Ubuntu."
python3 -c 'import venv, ensurepip' 2>/dev/null ||
  die "python3 has no venv/ensurepip module. Install it: 'sudo apt-get install python3-venv' on Debian/Ubuntu."

if [[ ! -x $PY ]]; then
  say "creating a virtualenv in $VENV ($(python3 --version 2>&1))"
  rm -rf "$VENV"
  python3 -m venv "$VENV" || die "'python3 -m venv $VENV' failed. Install python3-venv ('sudo apt-get install python3-venv')."
fi
"$PY" -m pip --version >/dev/null 2>&1 ||
  die "$VENV has no pip. Install python3-pip and python3-venv ('sudo apt-get install python3-pip python3-venv'), remove $VENV and run this again."

say "installing pyarrow==$PYARROW_VERSION $PEERS from PyPI into $VENV"
# shellcheck disable=SC2086  # $PEERS is a list of requirements
"$PY" -m pip install --quiet --disable-pip-version-check "pyarrow==$PYARROW_VERSION" $PEERS ||
  die "pip could not install pyarrow==$PYARROW_VERSION $PEERS (no network access to PyPI, or no wheel for this platform and Python $("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])'))."
peers_pinned || die "$VENV does not have $PEERS after pip install."
say "installed: pyarrow $("$PY" -c 'import pyarrow; print(pyarrow.__version__)'), $PEERS"
