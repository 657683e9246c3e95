# shellcheck shell=bash
# Redis 7 from Debian's packages, started as a process of its own.
# Sourced by scripts/stack.sh, which sets the paths and settings used here.

redis_ping() {
  local line=""
  exec 3<>"/dev/tcp/127.0.0.1/$REDIS_PORT" || return 1
  printf 'PING\r\n' >&3
  IFS= read -r -t 2 line <&3 || true
  exec 3<&-
  [[ $line == +PONG* || $line == -NOAUTH* ]]
}
redis_ready() { redis_ping 2>/dev/null; }

up_redis() {
  local t0 pid
  t0=$(now_ms)
  if redis_ready; then
    log "redis: reusing 127.0.0.1:$REDIS_PORT"
    return 0
  fi
  have redis-server || apt_install redis-server
  # The package may have started its own server on the default port.
  if redis_ready; then
    log "redis: reusing 127.0.0.1:$REDIS_PORT (started by the redis-server package)"
    return 0
  fi
  if tcp_open 127.0.0.1 "$REDIS_PORT"; then
    die "redis: port $REDIS_PORT is taken by something that does not answer PING (pid $(port_pid "$REDIS_PORT"))" \
      "free the port or set REDIS_PORT"
  fi
  mkdir -p "$DATA_DIR/redis"
  rm -f "$RUN_DIR/redis.pid"
  redis-server --daemonize yes --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no \
    --dir "$DATA_DIR/redis" --pidfile "$RUN_DIR/redis.pid" --logfile "$LOG_DIR/redis.log" \
    </dev/null 9>&- >/dev/null 2>&1 ||
    { show_tail "$LOG_DIR/redis.log"; die "redis: redis-server failed to start (log: $LOG_DIR/redis.log)"; }
  touch "$RUN_DIR/redis.owned"
  if ! wait_for "$STACK_READY_TIMEOUT" - redis_ready; then
    show_tail "$LOG_DIR/redis.log"
    die "redis: not answering PING on 127.0.0.1:$REDIS_PORT after ${STACK_READY_TIMEOUT}s"
  fi
  pid=$(pidfile_pid "$RUN_DIR/redis.pid" redis-server || port_pid "$REDIS_PORT")
  log "redis: started 127.0.0.1:$REDIS_PORT in $(since "$t0") (pid ${pid:-?})"
}

down_redis() {
  local pid
  [[ -f $RUN_DIR/redis.owned ]] || { log "redis: not started by stack.sh, leaving it alone"; return 0; }
  pid=$(pidfile_pid "$RUN_DIR/redis.pid" redis-server || true)
  if [[ -n $pid ]]; then stop_pid redis "$pid"; else log "redis: already stopped"; fi
  rm -f "$RUN_DIR/redis.owned" "$RUN_DIR/redis.pid"
}
