#!/usr/bin/env bash
# `npm run bench:<name>`: the stack, a fresh build, then test/bench/<name>.bench.ts.
set -euo pipefail
cd "$(dirname "$0")/.."
name="${1:?usage: bench.sh http|ledger}"
bash scripts/ensure-deps.sh
stack_env="$(bash scripts/stack.sh up)" # fails here, with stack.sh's message, if the stack cannot start
while IFS= read -r line; do [ -n "$line" ] && export "${line?}"; done <<< "$stack_env"
exec node "dist/test/bench/${name}.bench.js"
