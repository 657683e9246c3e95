#!/usr/bin/env bash
# `npm run bench:<name>`: the stack, a fresh build, then test/bench/<name>.bench.ts.
set -euo pipefail
cd "$(dirname "$0")/.."
name="${1:?usage: bench.sh http|ledger}"
bash scripts/ensure-deps.sh
while IFS= read -r line; do [ -n "$line" ] && export "${line?}"; done <<< "$(bash scripts/stack.sh up)"
exec node "dist/test/bench/${name}.bench.js"
