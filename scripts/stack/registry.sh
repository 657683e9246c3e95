# shellcheck shell=bash
# Apicurio Registry 3.3.3 (Confluent-compatible API), from its tarball on Maven Central.
# Sourced by scripts/stack.sh, which sets the paths and settings used here.

APICURIO_VERSION=3.3.3
APICURIO_TARBALL=$CACHE_DIR/apicurio-registry-app-$APICURIO_VERSION-all.tar.gz
APICURIO_HOME=$CACHE_DIR/apicurio-$APICURIO_VERSION
REGISTRY_URL=http://127.0.0.1:$REGISTRY_PORT/apis/ccompat/v7

registry_java() {
  local j v
  if [[ -n ${JAVA_HOME:-} && -x $JAVA_HOME/bin/java ]]; then
    v=$(java_major "$JAVA_HOME/bin/java")
    ((v >= 21)) || log "registry: JAVA_HOME=$JAVA_HOME is Java $v; Apicurio needs >= 21, looking elsewhere"
  fi
  j=$(find_java 21) || die "registry: Apicurio Registry $APICURIO_VERSION needs Java >= 21 and none was found" \
    "looked at JAVA_HOME (${JAVA_HOME:-unset}), java on the PATH and /usr/lib/jvm/*/bin/java" \
    "install a JDK >= 21 (e.g. Eclipse Temurin 21 or 25 under /usr/lib/jvm) or point JAVA_HOME at one"
  echo "$j"
}

ensure_apicurio() {
  local t0 tmp run
  [[ -f $APICURIO_HOME/.complete && -f $APICURIO_HOME/quarkus-run.jar ]] && return 0
  t0=$(now_ms)
  if [[ ! -s $APICURIO_TARBALL ]]; then
    log "registry: downloading Apicurio Registry $APICURIO_VERSION from Maven Central (~160 MB)"
    mvn_run "$LOG_DIR/mvn-apicurio.log" dependency:copy \
      -Dartifact="io.apicurio:apicurio-registry-app:$APICURIO_VERSION:tar.gz:all" -DoutputDirectory="$CACHE_DIR"
    [[ -s $APICURIO_TARBALL ]] || die "registry: mvn finished but $APICURIO_TARBALL is missing"
  fi
  log "registry: unpacking into $APICURIO_HOME"
  tmp=$APICURIO_HOME.tmp
  rm -rf "$tmp"; mkdir -p "$tmp"
  tar -xzf "$APICURIO_TARBALL" -C "$tmp" ||
    { rm -rf "$tmp" "$APICURIO_TARBALL"; die "registry: $APICURIO_TARBALL is damaged (deleted it); rerun to download again"; }
  run=$(find "$tmp" -name quarkus-run.jar -print -quit)
  [[ -n $run ]] || die "registry: no quarkus-run.jar inside $APICURIO_TARBALL"
  rm -rf "$APICURIO_HOME"
  mv "$(dirname "$run")" "$APICURIO_HOME"
  rm -rf "$tmp"
  touch "$APICURIO_HOME/.complete"
  log "registry: unpacked in $(since "$t0")"
}

# prefetch_registry KAFKA_UP_PID: a checkout's first start downloads and unpacks Apicurio (about 160
# MB, some 7 s); this does it beside Postgres's start rather than after it. Both downloads are
# Maven's into ~/.m2, so this one waits until Kafka's jars are in place (or its start has ended).
prefetch_registry() {
  local kafka_up_pid=$1
  registry_ready && return 0
  while [[ ! -f $KAFKA_LIB/.complete ]] && kill -0 "$kafka_up_pid" 2>/dev/null; do sleep 0.2; done
  ensure_apicurio
}

registry_ready() {
  curl -sf -o /dev/null --max-time 3 "$REGISTRY_URL/subjects"
}

up_registry() {
  local t0 java pid rc=0
  t0=$(now_ms)
  have curl || apt_install curl
  pid=$(pidfile_pid "$RUN_DIR/registry.pid" quarkus-run.jar || true)
  [[ -z $pid ]] || check_same_port registry "$RUN_DIR/registry.pid" "$pid" "$REGISTRY_PORT" REGISTRY_PORT
  if registry_ready; then
    log "registry: reusing 127.0.0.1:$REGISTRY_PORT${pid:+ (pid $pid)}"
    return 0
  fi
  if [[ -n $pid ]]; then
    log "registry: pid $pid (started earlier) is not answering yet; waiting"
  else
    if tcp_open 127.0.0.1 "$REGISTRY_PORT"; then
      die "registry: port $REGISTRY_PORT is taken by something that is not answering $REGISTRY_URL/subjects (pid $(port_pid "$REGISTRY_PORT"))" \
        "free the port or set REGISTRY_PORT"
    fi
    if tcp_open 127.0.0.1 "$REGISTRY_MANAGEMENT_PORT"; then
      die "registry: Apicurio's management port $REGISTRY_MANAGEMENT_PORT is already in use (pid $(port_pid "$REGISTRY_MANAGEMENT_PORT"))" \
        "free it or set REGISTRY_MANAGEMENT_PORT"
    fi
    java=$(registry_java)
    ensure_apicurio
    [[ -f $LOG_DIR/registry.log ]] && mv -f "$LOG_DIR/registry.log" "$LOG_DIR/registry.log.1"
    # shellcheck disable=SC2086
    (
      cd "$APICURIO_HOME" || exit 1
      export APICURIO_STORAGE_KIND=sql APICURIO_STORAGE_SQL_KIND=postgresql
      export APICURIO_DATASOURCE_URL="jdbc:postgresql://$PG_HOST:$PG_PORT/$REGISTRY_DATABASE"
      export APICURIO_DATASOURCE_USERNAME="$PG_USER" APICURIO_DATASOURCE_PASSWORD="$PG_PASSWORD"
      export APICURIO_DATASOURCE_JDBC_INITIAL_SIZE="$REGISTRY_DB_POOL_MIN"
      export APICURIO_DATASOURCE_JDBC_MIN_SIZE="$REGISTRY_DB_POOL_MIN"
      export APICURIO_DATASOURCE_JDBC_MAX_SIZE="$REGISTRY_DB_POOL_MAX"
      export APICURIO_REST_DELETION_GROUP_ENABLED="$REGISTRY_ALLOW_DELETES"
      export APICURIO_REST_DELETION_ARTIFACT_ENABLED="$REGISTRY_ALLOW_DELETES"
      export APICURIO_REST_DELETION_ARTIFACT_VERSION_ENABLED="$REGISTRY_ALLOW_DELETES"
      nohup setsid "$java" $REGISTRY_HEAP_OPTS $REGISTRY_JVM_OPTS -Djava.awt.headless=true \
        -Dquarkus.http.host=127.0.0.1 -Dquarkus.http.port="$REGISTRY_PORT" \
        -Dquarkus.management.host=127.0.0.1 -Dquarkus.management.port="$REGISTRY_MANAGEMENT_PORT" \
        -jar quarkus-run.jar </dev/null >"$LOG_DIR/registry.log" 2>&1 9>&- &
      echo "$! $REGISTRY_PORT" >"$RUN_DIR/registry.pid"
    )
    read -r pid _ <"$RUN_DIR/registry.pid"
    log "registry: starting Apicurio Registry $APICURIO_VERSION (pid $pid, $(jdk_name "$java"), storage: postgres database $REGISTRY_DATABASE)"
  fi
  wait_for "$REGISTRY_READY_TIMEOUT" "$pid" registry_ready || rc=$?
  if ((rc != 0)); then
    show_tail "$LOG_DIR/registry.log"
    if ((rc == 2)); then
      rm -f "$RUN_DIR/registry.pid"
      die "registry: Apicurio exited during startup (log: $LOG_DIR/registry.log)"
    fi
    stop_pid registry "$pid"; rm -f "$RUN_DIR/registry.pid"
    die "registry: $REGISTRY_URL/subjects not answering after ${REGISTRY_READY_TIMEOUT}s, stopped it (log: $LOG_DIR/registry.log)"
  fi
  log "registry: ready at $REGISTRY_URL in $(since "$t0") (pid $pid)"
}

down_registry() {
  local pid
  pid=$(pidfile_pid "$RUN_DIR/registry.pid" quarkus-run.jar || true)
  if [[ -n $pid ]]; then stop_pid registry "$pid"; else log "registry: not started by stack.sh (no live pid file)"; fi
  rm -f "$RUN_DIR/registry.pid"
}
