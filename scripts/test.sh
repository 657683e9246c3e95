#!/usr/bin/env bash
# `npm test`: the unit suite (pure code, no stack: it runs while the stack starts and beside the
# integration suite's start, its report printed at the end) and the integration suite against the
# real stack. `npm run test:unit` runs the first alone, `npm run
# test:system` the tests of system scale (below). `npm test -- FILE...` runs the compiled files
# named (dist/test/.../x.test.js), every test in them, against the stack. npm test and test:system
# also check the types (scripts/typecheck.sh) beside the rest, and fail if they do not check.
# Against the stack, each run has a database, topics and Redis prefix of its own (never the
# development ones).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/stack-env.sh
source scripts/stack-env.sh

suite=default
case ${1:-} in unit | system) suite=$1; shift ;; esac
files=()
for arg in "$@"; do case $arg in *.test.js) files+=("$arg") ;; esac; done
[ "${#files[@]}" -gt 0 ] && suite=files

unit() {
  echo "[test] the unit suite"
  node_modules/.bin/mocha --no-config --timeout 10000 --exit --reporter dot 'dist/test/unit/**/*.test.js'
}

if [ "$suite" = unit ]; then
  bash scripts/ensure-deps.sh
  bash scripts/stack.sh tools
  unit
  exit
fi

stack_start
bash scripts/ensure-deps.sh
bash scripts/stack.sh tools
# The types are checked beside the tests, at a lower priority (the suites leave a core idle about a
# quarter of the time: the check fills that rather than delay the unit suite and the stack's start);
# the run fails at its end if they do not check (the build strips them without looking).
typecheck_log=$(mktemp)
typecheck_pid=
case $suite in default | system) nice -n 10 bash scripts/typecheck.sh > "$typecheck_log" 2>&1 & typecheck_pid=$! ;; esac
# The unit suite needs no stack: it runs while the stack starts and beside the integration suite's
# first files (which mostly wait for their services to start), its report printed when it ends.
unit_log=$(mktemp)
unit_pid=
if [ "$suite" = default ]; then unit > "$unit_log" 2>&1 & unit_pid=$!; fi
stack_wait

# Runs are named by their start second; two runs started in the same second (worktrees sharing
# one stack) would share a namespace, so the second waits for the next free second.
run_id="$(date +%s)"
while ! mkdir "/tmp/payments-test-run.$run_id" 2>/dev/null; do sleep 1; run_id="$(date +%s)"; done
export DATABASE_URL="${DATABASE_URL%/*}/payments_test_${run_id}"
export REDIS_KEY_PREFIX="test:${run_id}:"
export KAFKA_TOPIC_PREFIX="test.${run_id}."
export LOG_LEVEL="${LOG_LEVEL:-warn}"
# Four partitions a topic, not the service's twelve: a run makes a namespace of topics per worker
# and per service a test starts, and the broker's work grows with their partitions.
export KAFKA_PARTITIONS="${KAFKA_PARTITIONS:-4}"
export TEST_TIMES_FILE="/tmp/payments-test-run.$run_id/times"
# A suite's files are spread over TEST_JOBS worker processes (test/hooks.ts gives each a namespace
# of its own): most of a test's time is waiting (Kafka, the rails, a retry), which other files fill.
# Four by default, on two cores: a run with four (and some lighter tests) ended 48 s sooner than one
# with three; the share of the workers alone was not measured.
# The system suite is the tests whose title says @system (scale, crashes, long outages): npm test
# leaves them out, `npm run test:system` runs them alone.
# The files start longest first (test/integration/slowest-first.txt, from the times a run prints),
# the others after them by name: started last, a long file kept one worker busy for its last
# twenty seconds while the others idled. A stale list only costs that order, never a file.
integration_files() {
  local listed=() file
  while IFS= read -r file; do
    file="dist/test/integration/${file%.ts}.js"
    [ -f "$file" ] && listed+=("$file")
  done < <(grep -v '^#' test/integration/slowest-first.txt)
  printf '%s\n' "${listed[@]}"
  find dist/test/integration -name '*.test.js' | sort | grep -vxF -f <(printf '%s\n' "${listed[@]}")
}
case $suite in
  default) echo "[test] the integration suite"; mapfile -t specs < <(integration_files); specs+=(--grep @system --invert) ;;
  system) echo "[test] the system suite"; specs=('dist/test/integration/**/*.test.js' --grep @system) ;;
  files) specs=() ;;
esac
parallel=(--parallel --jobs "${TEST_JOBS:-4}")
[ "$suite" = files ] && parallel=()
status=0
started_ms=$(date +%s%3N)
node_modules/.bin/mocha "${parallel[@]}" "${specs[@]}" "$@" || status=$?
if [ -n "$unit_pid" ]; then
  unit_status=0
  wait "$unit_pid" || unit_status=$?
  cat "$unit_log"
  [ "$unit_status" = 0 ] || { echo "[test] the unit suite failed (above)"; status=1; }
fi
rm -f "$unit_log"
if [ -n "$typecheck_pid" ] && ! wait "$typecheck_pid"; then
  echo "[test] the type check failed (scripts/typecheck.sh):"
  cat "$typecheck_log"
  status=1
fi
rm -f "$typecheck_log"
if [ -s "$TEST_TIMES_FILE" ]; then
  echo "the slowest files (seconds, from a file's first hook to its last):"
  # awk reads the whole list (a head would close the pipe on sort, and pipefail would fail the run).
  sort -rn "$TEST_TIMES_FILE" | awk -F '\t' 'NR <= 10 { printf "  %6.1f  %s\n", $1 / 1000, $2 }'
  echo "the costliest files (CPU seconds: their worker's tests and service, plus the processes they spawned and ended):"
  awk -F '\t' '{ printf "%d\t%s\t%d\t%d\n", $5 + $6, $2, $5, $6 }' "$TEST_TIMES_FILE" | sort -rn |
    awk -F '\t' 'NR <= 10 { printf "  %6.1f  %s (%.1f + %.1f)\n", $1 / 1000, $2, $3 / 1000, $4 / 1000 }'
  awk -F '\t' '{ worker += $5; spawned += $6 } END { printf "in all: %.0f CPU seconds in the workers, %.0f in what they spawned\n", worker / 1000, spawned / 1000 }' "$TEST_TIMES_FILE"
  # A worker that ran out of files long before the others is time the order of the files lost.
  awk -F '\t' -v start="$started_ms" '{ if ($3 > end[$4]) { end[$4] = $3; last[$4] = $2 } }
    END { printf "the last file of each worker ended (seconds after the suite began):"; for (w in end) printf "  %.0f (%s)", (end[w] - start) / 1000, last[w]; print "" }' "$TEST_TIMES_FILE"
fi
exit "$status"
