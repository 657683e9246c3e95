#!/usr/bin/env bash
# `npm run chaos` (`-- --short` for the CI form): the stack, a fresh build, then test/chaos/run.ts.
# It SIGKILLs the local stack's Kafka, Redis and Postgres and brings them back: nothing else
# should be using them meanwhile.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh
stack_env="$(bash scripts/stack.sh up)" # fails here, with stack.sh's message, if the stack cannot start
while IFS= read -r line; do [ -n "$line" ] && export "${line?}"; done <<< "$stack_env"
export KAFKAJS_NO_PARTITIONER_WARNING=1
exec node dist/test/chaos/run.js "$@"
