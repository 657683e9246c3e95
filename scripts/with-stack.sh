#!/usr/bin/env bash
# Runs a command with the service built and the local stack up, its addresses exported
# (DATABASE_URL, REDIS_URL, KAFKA_BROKERS, SCHEMA_REGISTRY_URL): the benchmarks and the chaos suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh
stack_env="$(bash scripts/stack.sh up)" # fails here, with stack.sh's message, if the stack cannot start
while IFS= read -r line; do [ -n "$line" ] && export "${line?}"; done <<< "$stack_env"
export KAFKAJS_NO_PARTITIONER_WARNING=1
exec "$@"
