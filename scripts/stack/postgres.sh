# shellcheck shell=bash
# Postgres 15 from Debian's packages: installed, provisioned (role, database), tuned, started.
# Sourced by scripts/stack.sh, which sets the paths and settings used here.

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
# Connections the cluster takes, when this script starts it (a restart is needed to change it).
PG_MAX_CONNECTIONS=${PG_MAX_CONNECTIONS:-300}

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
      # The test suite's workers each run a service, and some tests start more beside it: with
      # other runs on the same machine, the default of 100 connections ran out. Set before start.
      as_root pg_conftool "$ver" main set max_connections "$PG_MAX_CONNECTIONS" 9>&- >>"$LOG_DIR/postgres-setup.log" 2>&1 ||
        log "postgres: could not set max_connections to $PG_MAX_CONNECTIONS; the cluster keeps its own"
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
