#!/usr/bin/env bash
# Local stack for the payments service, without Docker:
#   Postgres 15 + Redis 7 (Debian packages), Kafka 4.1.1 KRaft single node (jars from Maven Central),
#   Apicurio Registry 3.3.3 (tarball from Maven Central, schemas stored in Postgres).
#
# Usage: scripts/stack.sh [up|down|status]     (default: up; runs from any directory)
#
#   up      For each component: reuse whatever already answers at the configured address, otherwise
#           install it if missing, start it and wait for readiness (bounded). Idempotent. Logs go to
#           stderr prefixed "[stack]"; the last lines on stdout are the app's settings
#           (DATABASE_URL, REDIS_URL, KAFKA_BROKERS, SCHEMA_REGISTRY_URL), also written to
#           $STACK_DIR/env, so `eval "$(scripts/stack.sh up)"` works.
#   down    Stops, in reverse order, only what this script started (pid files / markers in
#           $STACK_DIR/run). Servers that were already running when `up` ran are left alone.
#   status  One line per component: up/down, address, pid and resident memory. Exit 0 if all up.
#
# Settings and their defaults: scripts/stack.env (variables already set in the environment win).
# Extra knob: KAFKA_PROBE=auto|kcat|bash picks the Kafka readiness probe (auto: kcat if installed).
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$SCRIPT_DIR/.." && pwd)
cd "$REPO_ROOT"
# shellcheck source=scripts/stack.env
source "$SCRIPT_DIR/stack.env"

KAFKA_VERSION=4.1.1
APICURIO_VERSION=3.3.3
KAFKA_PROBE=${KAFKA_PROBE:-auto}

CACHE_DIR=$STACK_DIR/cache
DATA_DIR=$STACK_DIR/data
LOG_DIR=$STACK_DIR/logs
RUN_DIR=$STACK_DIR/run
KAFKA_LIB=$CACHE_DIR/kafka-$KAFKA_VERSION/lib
KAFKA_DATA=$DATA_DIR/kafka
KAFKA_LOG_DIRS=$KAFKA_DATA/log
KAFKA_PROPS=$KAFKA_DATA/server.properties
APICURIO_TARBALL=$CACHE_DIR/apicurio-registry-app-$APICURIO_VERSION-all.tar.gz
APICURIO_HOME=$CACHE_DIR/apicurio-$APICURIO_VERSION
REGISTRY_URL=http://127.0.0.1:$REGISTRY_PORT/apis/ccompat/v7

export PATH="$PATH:/usr/sbin:/sbin"
export LC_ALL=C
APT_UPDATED=0

# ---------------------------------------------------------------------------------------------
# helpers

log() { printf '[stack] %s\n' "$*" >&2; }

die() {
  local line
  for line in "$@"; do printf '[stack] ERROR: %s\n' "$line" >&2; done
  exit 1
}

have() { command -v "$1" >/dev/null 2>&1; }

now_ms() { date +%s%3N; }

# seconds since $1 (a now_ms value), one decimal
since() { local d=$(( $(now_ms) - $1 )); printf '%d.%d s' $((d / 1000)) $(((d % 1000) / 100)); }

# Print the last lines of log files (for failure messages).
show_tail() {
  local f
  for f in "$@"; do
    [[ -s $f ]] || continue
    log "---- last lines of $f ----"
    tail -n 25 "$f" | sed 's/^/[stack]   /' >&2
  done
}

# show_new_lines FILE FROM: the last lines of FILE written after line FROM (for appended logs).
show_new_lines() {
  [[ -s $1 ]] || return 0
  log "---- last lines of $1 (this start) ----"
  tail -n +"$(($2 + 1))" "$1" | tail -n 25 | sed 's/^/[stack]   /' >&2
}

# True when a TCP connection to host:port succeeds within 2 s.
# shellcheck disable=SC2016
tcp_open() { timeout 2 bash -c 'exec 3<>"/dev/tcp/$1/$2"' _ "$1" "$2" 2>/dev/null; }

is_local_host() { [[ $1 == 127.* || $1 == localhost || $1 == ::1 ]]; }

# Poll "$@" every 0.25 s until it succeeds or $1 seconds pass. If $2 is a pid (not "-") and that
# process exits meanwhile, give up at once. Returns 0 ready, 1 deadline, 2 process died.
wait_for() {
  local timeout=$1 pid=$2; shift 2
  local deadline=$(( $(now_ms) + timeout * 1000 ))
  while :; do
    if "$@"; then return 0; fi
    if [[ $pid != - ]] && pid_gone "$pid"; then return 2; fi
    (( $(now_ms) < deadline )) || return 1
    sleep 0.25
  done
}

# pid_matches PID PATTERN: the process is alive and its command line contains PATTERN.
pid_matches() {
  [[ -n $1 && -r /proc/$1/cmdline ]] || return 1
  tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -qF -- "$2"
}

# Our pid files hold "<pid> <port>" (redis writes its own, pid only).
# pidfile_pid FILE PATTERN: print the pid in FILE if that process is still ours; else drop FILE.
pidfile_pid() {
  local pid
  [[ -f $1 ]] || return 1
  read -r pid _ <"$1" || true
  pid=${pid//[!0-9]/}
  if pid_matches "$pid" "$2"; then echo "$pid"; return 0; fi
  rm -f "$1"
  return 1
}

# Pid of the process listening on a local TCP port (needs ss; empty if unknown).
port_pid() {
  have ss || return 0
  ss -Hltnp "sport = :$1" 2>/dev/null | grep -o 'pid=[0-9]*' | head -n1 | cut -d= -f2 || true
}

rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null || true; }

# Sum of RSS over a process and its descendants (postgres is one process per connection).
tree_rss() {
  local total=0 n=0 p kids
  local -a queue=("$1")
  while ((${#queue[@]})); do
    p=${queue[0]}; queue=("${queue[@]:1}")
    total=$(( total + $(rss_kb "$p" || echo 0) + 0 )); n=$((n + 1))
    kids=$(cat /proc/"$p"/task/*/children 2>/dev/null || true)
    for k in $kids; do queue+=("$k"); done
  done
  echo "$total $n"
}

# stop_pid NAME PID: SIGTERM, wait up to 20 s, then SIGKILL (and wait up to 5 s more).
stop_pid() {
  local name=$1 pid=$2 t0
  t0=$(now_ms)
  kill -TERM "$pid" 2>/dev/null || return 0
  if wait_for 20 - pid_gone "$pid"; then
    log "$name: stopped pid $pid in $(since "$t0")"
    return 0
  fi
  log "$name: pid $pid still running after 20 s, sending SIGKILL"
  kill -KILL "$pid" 2>/dev/null || true
  wait_for 5 - pid_gone "$pid" || die "$name: pid $pid survived SIGKILL"
}

# Gone, or a zombie nobody has reaped yet (daemons end up as children of pid 1).
# pidfile_port FILE: the port recorded next to the pid.
pidfile_port() { local _p port=""; read -r _p port <"$1" 2>/dev/null || true; echo "$port"; }

# Refuse to touch an instance of ours that was started with another port.
check_same_port() {
  local name=$1 file=$2 pid=$3 want=$4 var=$5 had
  had=$(pidfile_port "$file")
  [[ -z $had || $had == "$want" ]] && return 0
  die "$name: already running from $STACK_DIR on port $had (pid $pid), but $var=$want" \
    "stop it first (scripts/stack.sh down, with the old $var) or use $var=$had"
}

pid_gone() {
  kill -0 "$1" 2>/dev/null || return 0
  [[ $(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1) == Z ]]
}

as_root() {
  if ((EUID == 0)); then "$@"
  elif have sudo && sudo -n true 2>/dev/null; then sudo -n "$@"
  else die "root is needed to run: $*" "run scripts/stack.sh as root, or give this user passwordless sudo"
  fi
}

as_postgres() {
  if [[ $(id -un) == postgres ]]; then "$@"
  elif ((EUID == 0)); then runuser -u postgres -- "$@"
  elif have sudo && sudo -n true 2>/dev/null; then sudo -n -u postgres "$@"
  else return 1
  fi
}

# apt_install PKG...: apt-get update (at most once per run), then install. Never reads stdin.
apt_install() {
  have apt-get || die "missing: $* and apt-get is not available to install it" \
    "install $* with your package manager, then rerun scripts/stack.sh"
  mkdir -p "$LOG_DIR"
  if ((APT_UPDATED == 0)); then
    log "apt-get update (needed for: $*)"
    as_root timeout 600 apt-get update </dev/null >>"$LOG_DIR/apt.log" 2>&1 ||
      { show_tail "$LOG_DIR/apt.log"; die "apt-get update failed (log: $LOG_DIR/apt.log)" \
          "check that Debian's package mirrors are reachable, then rerun"; }
    APT_UPDATED=1
  fi
  local t0; t0=$(now_ms)
  log "apt-get install -y $*"
  as_root env DEBIAN_FRONTEND=noninteractive timeout 900 apt-get install -y "$@" </dev/null 9>&- \
    >>"$LOG_DIR/apt.log" 2>&1 ||
    { show_tail "$LOG_DIR/apt.log"; die "apt-get install $* failed (log: $LOG_DIR/apt.log)" \
        "fix it by hand: sudo DEBIAN_FRONTEND=noninteractive apt-get install -y $*"; }
  log "installed $* in $(since "$t0")"
}

# Major version of a java binary (8, 17, 25...), from the JDK's release file or `java -version`.
java_major() {
  local bin=$1 home v
  home=$(dirname "$(dirname "$(readlink -f "$bin")")")
  if [[ -f $home/release ]]; then
    v=$(sed -n 's/^JAVA_VERSION="\([^"]*\)".*/\1/p' "$home/release" | head -n1)
  fi
  if [[ -z ${v:-} ]]; then
    v=$("$bin" -version 2>&1 | sed -n 's/.*version "\([^"]*\)".*/\1/p' | head -n1)
  fi
  v=${v#1.}
  v=${v%%[!0-9]*}
  echo "${v:-0}"
}

# find_java MIN: print a java binary of major version >= MIN. Order: $JAVA_HOME, java on the PATH,
# then the newest JDK under /usr/lib/jvm.
find_java() {
  local min=$1 bin best="" best_v=0 v
  if [[ -n ${JAVA_HOME:-} && -x $JAVA_HOME/bin/java ]]; then
    v=$(java_major "$JAVA_HOME/bin/java")
    if ((v >= min)); then echo "$JAVA_HOME/bin/java"; return 0; fi
  fi
  if have java; then
    bin=$(command -v java)
    v=$(java_major "$bin")
    if ((v >= min)); then echo "$bin"; return 0; fi
  fi
  for bin in /usr/lib/jvm/*/bin/java; do
    [[ -x $bin ]] || continue
    v=$(java_major "$bin")
    if ((v >= min && v > best_v)); then best=$bin; best_v=$v; fi
  done
  [[ -n $best ]] && { echo "$best"; return 0; }
  return 1
}

# Short name of the JDK a java binary belongs to, e.g. "temurin-25-jdk-amd64 (Java 25)".
jdk_name() { echo "$(basename "$(dirname "$(dirname "$(readlink -f "$1")")")") (Java $(java_major "$1"))"; }

need_mvn() {
  have mvn && return 0
  apt_install maven
}

# mvn_run LOGFILE ARGS...: quiet, batch mode, bounded, against scripts/kafka/pom.xml.
mvn_run() {
  local logfile=$1; shift
  need_mvn
  if ! timeout 900 mvn -B -q -Dstyle.color=never -f "$SCRIPT_DIR/kafka/pom.xml" "$@" </dev/null 9>&- \
      >"$logfile" 2>&1; then
    show_tail "$logfile"
    die "mvn $* failed (log: $logfile)" \
      "Maven Central (https://repo.maven.apache.org) must be reachable; check proxies/mirrors in ~/.m2/settings.xml"
  fi
}

urlencode() {
  local s=$1 out="" c i
  for ((i = 0; i < ${#s}; i++)); do
    c=${s:i:1}
    case $c in
      [a-zA-Z0-9.~_-]) out+=$c ;;
      *) printf -v c '%%%02X' "'$c"; out+=$c ;;
    esac
  done
  printf '%s' "$out"
}

# ---------------------------------------------------------------------------------------------
# Postgres

# 0: accepting connections; 1: answering but not ready (starting/shutting down); 2: nothing.
pg_probe() {
  if have pg_isready; then
    local rc=0
    pg_isready -q -h "$PG_HOST" -p "$PG_PORT" -t 2 || rc=$?
    case $rc in 0) return 0 ;; 1) return 1 ;; *) return 2 ;; esac
  fi
  tcp_open "$PG_HOST" "$PG_PORT" && return 1
  return 2
}

pg_accepting() { pg_probe; }

# The Debian cluster to use: "<version>" of the newest /etc/postgresql/<version>/main.
pg_cluster_version() {
  local d v=""
  for d in /etc/postgresql/*/main; do
    [[ -d $d ]] || continue
    d=${d%/main}; d=${d##*/}
    [[ -z $v ]] || (( ${d%%.*} > ${v%%.*} )) && v=$d
  done
  [[ -n $v ]] && echo "$v"
}

pg_server_installed() {
  have pg_ctlcluster && compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null
}

# Does PG_USER log in over TCP with PG_PASSWORD, own both databases and have CREATEDB?
pg_login_ok() {
  local out
  out=$(PGPASSWORD=$PG_PASSWORD PGCONNECT_TIMEOUT=5 psql -X -At -h "$PG_HOST" -p "$PG_PORT" \
    -U "$PG_USER" -d "$PG_DATABASE" -v db="$PG_DATABASE" -v regdb="$REGISTRY_DATABASE" 2>&1 <<'SQL'
SELECT r.rolcreatedb
   AND (SELECT count(*) FROM pg_database d
         WHERE d.datname IN (:'db', :'regdb') AND d.datdba = r.oid) = 2
  FROM pg_roles r WHERE r.rolname = current_user;
SQL
  ) || { PG_LOGIN_ERROR=$out; return 1; }
  [[ $out == t ]] || { PG_LOGIN_ERROR="role/database check returned '${out}'"; return 1; }
}

# Create/repair role and databases as the postgres superuser over the local socket.
pg_provision() {
  local sockdir out
  for sockdir in /var/run/postgresql /tmp; do
    [[ -S $sockdir/.s.PGSQL.$PG_PORT ]] && break
  done
  [[ -S $sockdir/.s.PGSQL.$PG_PORT ]] || return 1
  id postgres >/dev/null 2>&1 || return 1
  out=$(as_postgres psql -X -q -v ON_ERROR_STOP=1 -h "$sockdir" -p "$PG_PORT" -d postgres \
      -v user="$PG_USER" -v pass="$PG_PASSWORD" -v db="$PG_DATABASE" -v regdb="$REGISTRY_DATABASE" \
      2>&1 <<'SQL'
SELECT format('CREATE ROLE %I', :'user')
 WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = :'user') \gexec
SELECT format('ALTER ROLE %I WITH LOGIN CREATEDB PASSWORD %L', :'user', :'pass') \gexec
SELECT format('CREATE DATABASE %I OWNER %I', :'db', :'user')
 WHERE NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = :'db') \gexec
SELECT format('ALTER DATABASE %I OWNER TO %I', :'db', :'user') \gexec
SELECT format('CREATE DATABASE %I OWNER %I', :'regdb', :'user')
 WHERE NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = :'regdb') \gexec
SELECT format('ALTER DATABASE %I OWNER TO %I', :'regdb', :'user') \gexec
SQL
  ) || { log "postgres: provisioning as the postgres superuser failed: $out"; return 1; }
}

# The ledger writes about 10 KB of WAL per transfer; with the default max_wal_size (1GB) a backlog
# of 100,000 commands forced a checkpoint every few seconds and drained about 20 % slower.
PG_MAX_WAL_SIZE_MB=${PG_MAX_WAL_SIZE_MB:-4096}

# Raises max_wal_size to PG_MAX_WAL_SIZE_MB when the local superuser can (a reload, no restart).
# A server we cannot administer keeps its settings; the service works either way.
pg_tune() {
  local sockdir current
  current=$(PGPASSWORD=$PG_PASSWORD psql -X -At -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -d "$PG_DATABASE"     -c "SELECT setting::int * CASE unit WHEN 'MB' THEN 1 WHEN 'GB' THEN 1024 ELSE 0 END FROM pg_settings WHERE name = 'max_wal_size'" 2>/dev/null) || return 0
  ((current >= PG_MAX_WAL_SIZE_MB)) && return 0
  for sockdir in /var/run/postgresql /tmp; do
    [[ -S $sockdir/.s.PGSQL.$PG_PORT ]] && break
  done
  if [[ -S $sockdir/.s.PGSQL.$PG_PORT ]] && id postgres >/dev/null 2>&1 &&
      as_postgres psql -X -q -h "$sockdir" -p "$PG_PORT" -d postgres \
        -c "ALTER SYSTEM SET max_wal_size = '${PG_MAX_WAL_SIZE_MB}MB'" -c "SELECT pg_reload_conf()" >/dev/null 2>&1; then
    log "postgres: max_wal_size raised from ${current}MB to ${PG_MAX_WAL_SIZE_MB}MB"
  else
    log "postgres: max_wal_size is ${current}MB and cannot be raised here; long ledger backlogs drain slower"
  fi
}

up_postgres() {
  local t0 ver rc=0 conf_port
  local -a opts=()
  t0=$(now_ms)
  pg_probe || rc=$?
  if ((rc != 2)); then
    log "postgres: reusing $PG_HOST:$PG_PORT"
    ((rc == 0)) || wait_for "$STACK_READY_TIMEOUT" - pg_accepting ||
      die "postgres: $PG_HOST:$PG_PORT answers but does not accept connections after ${STACK_READY_TIMEOUT}s"
  else
    is_local_host "$PG_HOST" ||
      die "postgres: nothing answers at $PG_HOST:$PG_PORT and it is not a local address" \
        "start that server, or use PG_HOST=127.0.0.1 to let this script run a local one"
    if ! pg_server_installed; then
      apt_install postgresql
    fi
    ver=$(pg_cluster_version || true)
    if [[ -z $ver ]]; then
      ver=$(find /usr/lib/postgresql -mindepth 3 -maxdepth 3 -path '*/bin/postgres' | sort -V | tail -n1 | cut -d/ -f5)
      log "postgres: creating Debian cluster $ver/main"
      as_root pg_createcluster -p "$PG_PORT" "$ver" main 9>&- >>"$LOG_DIR/postgres-setup.log" 2>&1 ||
        { show_tail "$LOG_DIR/postgres-setup.log"; die "postgres: pg_createcluster $ver main failed"; }
    fi
    # The package's post-install may have started the cluster already.
    if ! pg_accepting; then
      conf_port=$(pg_conftool -s "$ver" main show port 2>/dev/null || echo 5432)
      if as_root pg_ctlcluster "$ver" main status >/dev/null 2>&1; then
        die "postgres: cluster $ver/main is running on port $conf_port, not $PG_PORT" \
          "use PG_PORT=$conf_port, or stop it: pg_ctlcluster $ver main stop"
      fi
      [[ $conf_port == "$PG_PORT" ]] || opts=(-o "-p $PG_PORT")
      log "postgres: starting cluster $ver/main on $PG_HOST:$PG_PORT"
      if ! as_root timeout 60 pg_ctlcluster "${opts[@]}" "$ver" main start 9>&- \
          >>"$LOG_DIR/postgres-setup.log" 2>&1; then
        show_tail "$LOG_DIR/postgres-setup.log" "/var/log/postgresql/postgresql-$ver-main.log"
        die "postgres: pg_ctlcluster $ver main start failed" \
          "see /var/log/postgresql/postgresql-$ver-main.log; is port $PG_PORT free?"
      fi
    fi
    echo "$ver main" >"$RUN_DIR/postgres.owned"
    wait_for "$STACK_READY_TIMEOUT" - pg_accepting ||
      die "postgres: cluster $ver/main started but $PG_HOST:$PG_PORT not ready after ${STACK_READY_TIMEOUT}s" \
        "see /var/log/postgresql/postgresql-$ver-main.log"
    log "postgres: started $ver/main at $PG_HOST:$PG_PORT in $(since "$t0")"
  fi

  have psql || apt_install postgresql-client
  PG_LOGIN_ERROR=""
  if ! pg_login_ok; then
    log "postgres: ensuring role '$PG_USER' (LOGIN CREATEDB) and databases '$PG_DATABASE', '$REGISTRY_DATABASE'"
    pg_provision || die "postgres: cannot log in as '$PG_USER' to $PG_HOST:$PG_PORT/$PG_DATABASE: $PG_LOGIN_ERROR" \
      "and cannot fix it as the local postgres superuser. Create them by hand:" \
      "  CREATE ROLE \"$PG_USER\" LOGIN CREATEDB PASSWORD '...';" \
      "  CREATE DATABASE \"$PG_DATABASE\" OWNER \"$PG_USER\"; CREATE DATABASE \"$REGISTRY_DATABASE\" OWNER \"$PG_USER\";"
    pg_login_ok || die "postgres: role and databases created, but the password login over TCP still fails: $PG_LOGIN_ERROR" \
      "check pg_hba.conf allows scram-sha-256/md5 for host $PG_HOST"
  fi
  pg_tune
}

down_postgres() {
  local ver cluster
  [[ -f $RUN_DIR/postgres.owned ]] || { log "postgres: not started by stack.sh, leaving it alone"; return 0; }
  read -r ver cluster <"$RUN_DIR/postgres.owned"
  local t0; t0=$(now_ms)
  if as_root pg_ctlcluster "$ver" "$cluster" status >/dev/null 2>&1; then
    if ! as_root timeout 30 pg_ctlcluster -m fast "$ver" "$cluster" stop 9>&- >/dev/null 2>&1; then
      log "postgres: fast shutdown did not finish in 30 s, using immediate mode"
      as_root timeout 30 pg_ctlcluster -m immediate "$ver" "$cluster" stop 9>&- >/dev/null 2>&1 ||
        die "postgres: could not stop cluster $ver/$cluster"
    fi
    log "postgres: stopped cluster $ver/$cluster in $(since "$t0")"
  else
    log "postgres: cluster $ver/$cluster already stopped"
  fi
  rm -f "$RUN_DIR/postgres.owned"
}

pg_pid() {
  local pid ver
  pid=$(port_pid "$PG_PORT")
  if [[ -z $pid ]]; then
    ver=$(pg_cluster_version 2>/dev/null || true)
    [[ -n $ver && -r /var/run/postgresql/$ver-main.pid ]] && pid=$(head -n1 "/var/run/postgresql/$ver-main.pid")
  fi
  echo "${pid:-}"
}

# ---------------------------------------------------------------------------------------------
# Redis

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

# ---------------------------------------------------------------------------------------------
# Kafka

kafka_java() {
  find_java 17 || die "kafka: needs Java >= 17 and none was found (JAVA_HOME, PATH, /usr/lib/jvm)" \
    "install one: apt-get install -y openjdk-17-jre-headless"
}

ensure_kafka_lib() {
  local sum t0
  sum=$(sha256sum <"$SCRIPT_DIR/kafka/pom.xml" | cut -c1-16)
  if [[ -f $KAFKA_LIB/.complete && $(cat "$KAFKA_LIB/.complete") == "$sum" ]]; then return 0; fi
  t0=$(now_ms)
  log "kafka: downloading Kafka $KAFKA_VERSION jars from Maven Central into $KAFKA_LIB"
  rm -rf "$KAFKA_LIB.tmp"
  mvn_run "$LOG_DIR/mvn-kafka.log" dependency:copy-dependencies \
    -DoutputDirectory="$KAFKA_LIB.tmp" -DincludeScope=runtime
  [[ -f $KAFKA_LIB.tmp/kafka_2.13-$KAFKA_VERSION.jar ]] ||
    die "kafka: mvn finished but kafka_2.13-$KAFKA_VERSION.jar is missing from $KAFKA_LIB.tmp"
  rm -rf "$KAFKA_LIB"
  mv "$KAFKA_LIB.tmp" "$KAFKA_LIB"
  echo "$sum" >"$KAFKA_LIB/.complete"
  log "kafka: $(find "$KAFKA_LIB" -name '*.jar' | wc -l) jars ($(du -sh "$KAFKA_LIB" | cut -f1)) in $(since "$t0")"
}

write_kafka_props() {
  mkdir -p "$KAFKA_DATA" "$KAFKA_LOG_DIRS"
  cat >"$KAFKA_PROPS.tmp" <<EOF
# Generated by scripts/stack.sh; edits are overwritten. Single-node KRaft broker+controller.
process.roles=broker,controller
node.id=1
controller.quorum.bootstrap.servers=127.0.0.1:$KAFKA_CONTROLLER_PORT
listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT,CONTROLLER://127.0.0.1:$KAFKA_CONTROLLER_PORT,FAULT://127.0.0.1:$KAFKA_FAULT_PORT
advertised.listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT,FAULT://127.0.0.1:$KAFKA_FAULT_PROXY_PORT
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,FAULT:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
log.dirs=$KAFKA_LOG_DIRS
num.partitions=$KAFKA_NUM_PARTITIONS
log.retention.hours=24
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
# kafkajs commits offsets after every batch; without this each commit waits for the linger (see STACK.md)
group.coordinator.append.linger.ms=0
auto.create.topics.enable=false
EOF
  if cmp -s "$KAFKA_PROPS.tmp" "$KAFKA_PROPS"; then rm -f "$KAFKA_PROPS.tmp"; else mv "$KAFKA_PROPS.tmp" "$KAFKA_PROPS"; fi
}

format_kafka_storage() {
  local java=$1 id
  [[ -f $KAFKA_LOG_DIRS/meta.properties ]] && return 0
  log "kafka: formatting storage in $KAFKA_LOG_DIRS"
  id=$("$java" -cp "$KAFKA_LIB/*" kafka.tools.StorageTool random-uuid 2>>"$LOG_DIR/kafka-format.log" 9>&- | tail -n1) ||
    { show_tail "$LOG_DIR/kafka-format.log"; die "kafka: StorageTool random-uuid failed"; }
  "$java" -cp "$KAFKA_LIB/*" kafka.tools.StorageTool format --standalone -t "$id" -c "$KAFKA_PROPS" \
    9>&- >>"$LOG_DIR/kafka-format.log" 2>&1 ||
    { show_tail "$LOG_DIR/kafka-format.log"; die "kafka: StorageTool format failed (log: $LOG_DIR/kafka-format.log)"; }
}

# Does the broker answer a metadata request listing at least one broker? kcat when installed,
# otherwise a raw Metadata v4 request over bash's /dev/tcp (no dependencies, ~10 ms):
#   request  = size 16 | api_key 3 | api_version 4 | correlation_id 42 | client_id "p" | topics null | auto_create false
#   response = size | correlation_id | throttle_time_ms | broker count | ...  (first 16 bytes)
kafka_metadata_probe() {
  local bytes
  # shellcheck disable=SC2016
  bytes=$(timeout 5 bash -c '
    exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
    printf "\x00\x00\x00\x10\x00\x03\x00\x04\x00\x00\x00\x2a\x00\x01p\xff\xff\xff\xff\x00" >&3
    head -c 16 <&3 | od -An -tu1' _ "$KAFKA_PORT" 2>/dev/null) || return 1
  # shellcheck disable=SC2086
  set -- $bytes
  (($# == 16 && $8 == 42)) || return 1
  (((${13} << 24) + (${14} << 16) + (${15} << 8) + ${16} >= 1))
}

kafka_ready() {
  local probe=$KAFKA_PROBE
  tcp_open 127.0.0.1 "$KAFKA_PORT" || return 1
  if [[ $probe == auto ]]; then
    if have kcat; then probe=kcat; else probe=bash; fi
  fi
  case $probe in
    kcat) timeout 10 kcat -b "127.0.0.1:$KAFKA_PORT" -L -m 3 2>/dev/null | grep -Eq '^ *[1-9][0-9]* brokers:' ;;
    bash) kafka_metadata_probe ;;
    *) die "KAFKA_PROBE must be auto, kcat or bash (got '$KAFKA_PROBE')" ;;
  esac
}

up_kafka() {
  local t0 java pid rc=0 log_from=0
  t0=$(now_ms)
  pid=$(pidfile_pid "$RUN_DIR/kafka.pid" kafka.Kafka || true)
  if [[ -z $pid ]] && kafka_ready; then
    log "kafka: reusing 127.0.0.1:$KAFKA_PORT"
    return 0
  fi
  if [[ -n $pid ]]; then
    check_same_port kafka "$RUN_DIR/kafka.pid" "$pid" "$KAFKA_PORT" KAFKA_PORT
    if kafka_ready; then log "kafka: reusing 127.0.0.1:$KAFKA_PORT (pid $pid)"; return 0; fi
    log "kafka: pid $pid (started earlier) is not answering yet; waiting"
  else
    if tcp_open 127.0.0.1 "$KAFKA_PORT"; then
      die "kafka: port $KAFKA_PORT is taken by something that does not answer Kafka metadata requests (pid $(port_pid "$KAFKA_PORT"))" \
        "free the port or set KAFKA_PORT"
    fi
    if tcp_open 127.0.0.1 "$KAFKA_CONTROLLER_PORT"; then
      die "kafka: controller port $KAFKA_CONTROLLER_PORT is already in use (pid $(port_pid "$KAFKA_CONTROLLER_PORT"))" \
        "free the port or set KAFKA_CONTROLLER_PORT"
    fi
    java=$(kafka_java)
    ensure_kafka_lib
    write_kafka_props
    format_kafka_storage "$java"
    [[ -f $LOG_DIR/kafka.out ]] && mv -f "$LOG_DIR/kafka.out" "$LOG_DIR/kafka.out.1"
    log_from=$({ wc -l <"$LOG_DIR/kafka.log"; } 2>/dev/null || echo 0)
    # setsid: own session, so the broker outlives this shell and its process group.
    # shellcheck disable=SC2086
    nohup setsid "$java" $KAFKA_HEAP_OPTS -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -Djava.awt.headless=true \
      -Dlog4j2.configurationFile="$SCRIPT_DIR/kafka/log4j2.xml" -Dkafka.logs.dir="$LOG_DIR" \
      -cp "$KAFKA_LIB/*" kafka.Kafka "$KAFKA_PROPS" </dev/null >"$LOG_DIR/kafka.out" 2>&1 9>&- &
    pid=$!
    echo "$pid $KAFKA_PORT" >"$RUN_DIR/kafka.pid"
    log "kafka: starting Kafka $KAFKA_VERSION (pid $pid, $(jdk_name "$java"))"
  fi
  wait_for "$STACK_READY_TIMEOUT" "$pid" kafka_ready || rc=$?
  if ((rc != 0)); then
    show_tail "$LOG_DIR/kafka.out"
    show_new_lines "$LOG_DIR/kafka.log" "$log_from"
    if ((rc == 2)); then
      rm -f "$RUN_DIR/kafka.pid"
      die "kafka: the broker exited during startup (logs: $LOG_DIR/kafka.out, $LOG_DIR/kafka.log)" \
        "if its storage is damaged: scripts/stack.sh down && rm -rf $KAFKA_DATA"
    fi
    stop_pid kafka "$pid"; rm -f "$RUN_DIR/kafka.pid"
    die "kafka: not ready after ${STACK_READY_TIMEOUT}s, stopped it (logs: $LOG_DIR/kafka.out, $LOG_DIR/kafka.log)"
  fi
  log "kafka: ready at 127.0.0.1:$KAFKA_PORT in $(since "$t0") (pid $pid)"
}

down_kafka() {
  local pid
  pid=$(pidfile_pid "$RUN_DIR/kafka.pid" kafka.Kafka || true)
  if [[ -n $pid ]]; then stop_pid kafka "$pid"; else log "kafka: not started by stack.sh (no live pid file)"; fi
  rm -f "$RUN_DIR/kafka.pid"
}

# ---------------------------------------------------------------------------------------------
# Apicurio Registry

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
      cd "$APICURIO_HOME"
      export APICURIO_STORAGE_KIND=sql APICURIO_STORAGE_SQL_KIND=postgresql
      export APICURIO_DATASOURCE_URL="jdbc:postgresql://$PG_HOST:$PG_PORT/$REGISTRY_DATABASE"
      export APICURIO_DATASOURCE_USERNAME="$PG_USER" APICURIO_DATASOURCE_PASSWORD="$PG_PASSWORD"
      export APICURIO_DATASOURCE_JDBC_INITIAL_SIZE="$REGISTRY_DB_POOL_MIN"
      export APICURIO_DATASOURCE_JDBC_MIN_SIZE="$REGISTRY_DB_POOL_MIN"
      export APICURIO_DATASOURCE_JDBC_MAX_SIZE="$REGISTRY_DB_POOL_MAX"
      export APICURIO_REST_DELETION_GROUP_ENABLED="$REGISTRY_ALLOW_DELETES"
      export APICURIO_REST_DELETION_ARTIFACT_ENABLED="$REGISTRY_ALLOW_DELETES"
      export APICURIO_REST_DELETION_ARTIFACT_VERSION_ENABLED="$REGISTRY_ALLOW_DELETES"
      nohup setsid "$java" $REGISTRY_HEAP_OPTS -Djava.awt.headless=true \
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
  up_postgres
  up_redis
  up_kafka
  up_registry
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

main() {
  local cmd=${1:-up}
  mkdir -p "$CACHE_DIR" "$DATA_DIR" "$LOG_DIR" "$RUN_DIR"
  case $cmd in
    up) cmd_up ;;
    down) cmd_down ;;
    status) cmd_status ;;
    -h | --help | help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}" ;;
    *) die "unknown command '$cmd'" "usage: scripts/stack.sh [up|down|status]" ;;
  esac
}

# Sourcing the file (for tests) defines the functions without running anything.
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then main "$@"; fi
