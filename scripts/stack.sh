#!/usr/bin/env bash
# Local stack for the payments service, without Docker:
#   Postgres 15 + Redis 7 (Debian packages), Kafka 4.1.1 KRaft single node (jars from Maven Central),
#   Apicurio Registry 3.3.3 (tarball from Maven Central, schemas stored in Postgres).
#
# Usage: scripts/stack.sh [up|down|status|tools]     (default: up; runs from any directory)
#
#   up      For each component: reuse whatever already answers at the configured address, otherwise
#           install it if missing, start it and wait for readiness (bounded). Idempotent. Logs go to
#           stderr prefixed "[stack]"; the last lines on stdout are the app's settings
#           (DATABASE_URL, REDIS_URL, KAFKA_BROKERS, SCHEMA_REGISTRY_URL), also written to
#           $STACK_DIR/env, so `eval "$(scripts/stack.sh up)"` works.
#   down    Stops, in reverse order, only what this script started (pid files / markers in
#           $STACK_DIR/run). Servers that were already running when `up` ran are left alone.
#   status  One line per component: up/down, address, pid and resident memory. Exit 0 if all up.
#   tools   Installs what the tests need beside the servers (shellcheck, chromium, libfaketime), when missing.
#
# Each component lives in scripts/stack/<name>.sh; this file holds the commands.
# Settings and their defaults: scripts/stack.env (variables already set in the environment win).
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$SCRIPT_DIR/.." && pwd)
cd "$REPO_ROOT"
# shellcheck source=scripts/stack.env
source "$SCRIPT_DIR/stack.env"

CACHE_DIR=$STACK_DIR/cache
DATA_DIR=$STACK_DIR/data
LOG_DIR=$STACK_DIR/logs
RUN_DIR=$STACK_DIR/run

export PATH="$PATH:/usr/sbin:/sbin"
export LC_ALL=C

# One file per component: each defines up_<name>, down_<name> and the probes status uses.
# shellcheck source=scripts/stack/common.sh
source "$SCRIPT_DIR/stack/common.sh"
# shellcheck source=scripts/stack/postgres.sh
source "$SCRIPT_DIR/stack/postgres.sh"
# shellcheck source=scripts/stack/redis.sh
source "$SCRIPT_DIR/stack/redis.sh"
# shellcheck source=scripts/stack/kafka.sh
source "$SCRIPT_DIR/stack/kafka.sh"
# shellcheck source=scripts/stack/registry.sh
source "$SCRIPT_DIR/stack/registry.sh"

# ---------------------------------------------------------------------------------------------
# commands

lock() {
  exec 9>"$RUN_DIR/stack.lock"
  if ! flock -n 9; then
    log "another scripts/stack.sh is running; waiting for it (up to 10 min)"
    flock -w 600 9 || die "scripts/stack.sh is still locked by another run after 10 min ($RUN_DIR/stack.lock)"
  fi
}

print_env() {
  local db_url
  db_url="postgres://$(urlencode "$PG_USER"):$(urlencode "$PG_PASSWORD")@$PG_HOST:$PG_PORT/$(urlencode "$PG_DATABASE")"
  {
    echo "DATABASE_URL=$db_url"
    echo "REDIS_URL=redis://127.0.0.1:$REDIS_PORT"
    echo "KAFKA_BROKERS=127.0.0.1:$KAFKA_PORT"
    echo "KAFKA_FAULT_LISTENER=127.0.0.1:$KAFKA_FAULT_PORT"
    echo "KAFKA_FAULT_PROXY_PORT=$KAFKA_FAULT_PROXY_PORT"
    echo "SCHEMA_REGISTRY_URL=$REGISTRY_URL"
  } | tee "$STACK_DIR/env"
}

cmd_up() {
  local t0; t0=$(now_ms)
  lock
  # Kafka starts beside Postgres (each about 10 s from cold, and neither needs the other); the
  # registry keeps its schemas in Postgres, so it starts once Postgres is up, beside Kafka, its
  # files fetched while Postgres starts.
  local kafka_pid fetch_pid
  up_kafka &
  kafka_pid=$!
  prefetch_registry "$kafka_pid" &
  fetch_pid=$!
  up_postgres
  up_redis
  wait "$fetch_pid" || die "registry: its files could not be fetched (above)"
  up_registry
  wait "$kafka_pid" || die "kafka did not start (above)"
  log "stack up in $(since "$t0") (logs: $LOG_DIR; settings also in $STACK_DIR/env)"
  print_env
}

cmd_down() {
  lock
  down_registry
  down_kafka
  down_redis
  down_postgres
}

status_line() {
  local name=$1 state=$2 addr=$3 pid=$4 owner=$5 extra="" rss
  if [[ -n $pid ]] && rss=$(rss_kb "$pid") && [[ -n $rss ]]; then
    extra="pid $pid rss $((rss / 1024)) MB"
    if [[ $name == postgres ]]; then
      read -r total n < <(tree_rss "$pid")
      extra+=" (all $n processes: $((total / 1024)) MB)"
    fi
  fi
  printf '%-9s %-5s %-45s %s%s\n' "$name:" "$state" "$addr" "${extra:+$extra }" "${owner:+[$owner]}"
}

cmd_status() {
  local all=0 pid owner
  pid=$(pg_pid); owner=external; [[ -f $RUN_DIR/postgres.owned ]] && owner=stack.sh
  if pg_accepting; then status_line postgres up "$PG_HOST:$PG_PORT" "$pid" "$owner"
  else status_line postgres down "$PG_HOST:$PG_PORT" "" ""; all=1; fi

  pid=$(pidfile_pid "$RUN_DIR/redis.pid" redis-server || port_pid "$REDIS_PORT")
  owner=external; [[ -f $RUN_DIR/redis.owned ]] && owner=stack.sh
  if redis_ready; then status_line redis up "127.0.0.1:$REDIS_PORT" "$pid" "$owner"
  else status_line redis down "127.0.0.1:$REDIS_PORT" "" ""; all=1; fi

  owner=external
  if pid=$(pidfile_pid "$RUN_DIR/kafka.pid" kafka.Kafka); then owner=stack.sh; else pid=$(port_pid "$KAFKA_PORT"); fi
  if kafka_ready; then status_line kafka up "127.0.0.1:$KAFKA_PORT" "$pid" "$owner"
  elif [[ $owner == stack.sh ]]; then status_line kafka down "127.0.0.1:$KAFKA_PORT (pid $pid not answering)" "" ""; all=1
  else status_line kafka down "127.0.0.1:$KAFKA_PORT" "" ""; all=1; fi

  owner=external
  if pid=$(pidfile_pid "$RUN_DIR/registry.pid" quarkus-run.jar); then owner=stack.sh; else pid=$(port_pid "$REGISTRY_PORT"); fi
  if registry_ready; then status_line registry up "$REGISTRY_URL" "$pid" "$owner"
  elif [[ $owner == stack.sh ]]; then status_line registry down "$REGISTRY_URL (pid $pid not answering)" "" ""; all=1
  else status_line registry down "$REGISTRY_URL" "" ""; all=1; fi
  return $all
}

# What the test suite uses beside the servers: shellcheck, which checks these scripts.
cmd_tools() {
  have shellcheck || apt_install shellcheck
  # The simulation steps a process's wall clock (its clock_step fault) with libfaketime.
  compgen -G '/usr/lib/*/faketime/libfaketime.so.1' > /dev/null || apt_install libfaketime
  # The browser tests drive the partners' pages (consent, claim) in Debian's Chromium.
  have chromium || apt_install chromium
}

main() {
  local cmd=${1:-up}
  mkdir -p "$CACHE_DIR" "$DATA_DIR" "$LOG_DIR" "$RUN_DIR"
  case $cmd in
    up) cmd_up ;;
    down) cmd_down ;;
    status) cmd_status ;;
    tools) cmd_tools ;;
    -h | --help | help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}" ;;
    *) die "unknown command '$cmd'" "usage: scripts/stack.sh [up|down|status|tools]" ;;
  esac
}

# Sourcing the file (for tests) defines the functions without running anything.
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then main "$@"; fi
