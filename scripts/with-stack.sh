#!/usr/bin/env bash
# Runs a command with the service built and the local stack up, its addresses exported
# (DATABASE_URL, REDIS_URL, KAFKA_BROKERS, SCHEMA_REGISTRY_URL): the benchmarks and the chaos suite.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/stack-env.sh
source scripts/stack-env.sh
stack_env
exec "$@"
