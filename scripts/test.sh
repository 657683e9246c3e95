#!/usr/bin/env bash
# `npm test`: the whole suite against the real stack, in a database, topics and Redis prefix of
# its own (never the development ones).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh
bash scripts/stack.sh up
set -a; source scripts/stack.env; set +a
run_id="$(date +%s)"
export DATABASE_URL="postgres://${PG_USER}:${PG_PASSWORD}@${PG_HOST}:${PG_PORT}/payments_test_${run_id}"
export REDIS_URL="redis://127.0.0.1:${REDIS_PORT}"
export REDIS_KEY_PREFIX="test:${run_id}:"
export KAFKA_BROKERS="127.0.0.1:${KAFKA_PORT}"
export KAFKA_TOPIC_PREFIX="test.${run_id}."
export SCHEMA_REGISTRY_URL="http://127.0.0.1:${REGISTRY_PORT}/apis/ccompat/v7"
export KAFKAJS_NO_PARTITIONER_WARNING=1
export LOG_LEVEL="${LOG_LEVEL:-warn}"
exec node_modules/.bin/mocha "$@"
