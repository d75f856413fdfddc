#!/usr/bin/env bash
# npm run fuzz -- --runs N --seed S [--replay S:R]: builds the core when needed,
# bundles the struct-mutation fuzzer (ts/fuzz/) and runs it.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash build.sh core >/dev/null
npx --no-install rollup -c scripts/fuzz/rollup.config.mjs --silent
exec node --expose-gc build/fuzz/fuzz.mjs "$@"
