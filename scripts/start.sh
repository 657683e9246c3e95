#!/usr/bin/env bash
# `npm start`: brings up the local stack, then runs every role of the service in one process.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh
bash scripts/stack.sh up
set -a; source scripts/stack.env; set +a
export DATABASE_URL="${DATABASE_URL:-postgres://${PG_USER}:${PG_PASSWORD}@${PG_HOST}:${PG_PORT}/${PG_DATABASE}}"
export REDIS_URL="${REDIS_URL:-redis://127.0.0.1:${REDIS_PORT}}"
export KAFKA_BROKERS="${KAFKA_BROKERS:-127.0.0.1:${KAFKA_PORT}}"
export SCHEMA_REGISTRY_URL="${SCHEMA_REGISTRY_URL:-http://127.0.0.1:${REGISTRY_PORT}/apis/ccompat/v7}"
PORT="${PORT:-3000}"
echo "[start] starting the service on http://127.0.0.1:${PORT} (all roles; Ctrl-C stops it, 'npm run stack:down' stops the stack)"
echo "[start] begin with: curl -s -X POST http://127.0.0.1:${PORT}/v1/sandbox/accounts -H 'Content-Type: application/json' -d '{\"email\":\"me@example.com\",\"password\":\"a long password\",\"business_name\":\"Me Ltd\",\"country_code\":\"GB\"}'"
exec node dist/src/main.js
