#!/usr/bin/env bash
# `npm test`: the whole suite against the real stack, in a database, topics and Redis prefix of
# its own for this run (never the development ones).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/stack-env.sh
source scripts/stack-env.sh
bash scripts/stack.sh tools
# Runs are named by their start second; two runs started in the same second (worktrees sharing
# one stack) would share a namespace, so the second waits for the next free second.
run_id="$(date +%s)"
while ! mkdir "/tmp/payments-test-run.$run_id" 2>/dev/null; do sleep 1; run_id="$(date +%s)"; done
export DATABASE_URL="${DATABASE_URL%/*}/payments_test_${run_id}"
export REDIS_KEY_PREFIX="test:${run_id}:"
export KAFKA_TOPIC_PREFIX="test.${run_id}."
export LOG_LEVEL="${LOG_LEVEL:-warn}"
# `npm test -- dist/test/integration/x.test.js` runs the files named; without any, the whole suite,
# its files spread over TEST_JOBS worker processes (test/hooks.ts gives each a namespace of its
# own): most of a test's time is waiting (Kafka, the rails, a retry), which other files fill. With
# two workers on two cores the machine still idled 30 % of the run; three leave about 12 %.
specs=("dist/test/**/*.test.js")
parallel=(--parallel --jobs "${TEST_JOBS:-3}")
for arg in "$@"; do case $arg in *.test.js) specs=() parallel=() ;; esac; done
exec node_modules/.bin/mocha "${parallel[@]}" "${specs[@]}" "$@"
