# shellcheck shell=bash
# Helpers every component of the local stack uses: logging, waiting, pids, apt, Java and Maven.
# Sourced by scripts/stack.sh, which sets the paths and settings used here.

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
# Components start side by side (and `stack.sh tools` beside `stack.sh up`), so two installs may
# be asked for at once: they take turns on a lock of their own, and apt-get waits for dpkg's.
apt_install() {
  have apt-get || die "missing: $* and apt-get is not available to install it" \
    "install $* with your package manager, then rerun scripts/stack.sh"
  mkdir -p "$LOG_DIR" "$RUN_DIR"
  (
    flock -w 1800 8 || die "apt_install: another install held $RUN_DIR/apt.lock for 30 min"
    apt_install_locked "$@"
  ) 8>"$RUN_DIR/apt.lock"
}

# The package lists are updated once an hour at most (a mark file: the installs of one start may
# run in different subshells).
apt_install_locked() {
  if [[ -z $(find "$RUN_DIR/apt-updated" -mmin -60 2>/dev/null) ]]; then
    log "apt-get update (needed for: $*)"
    as_root timeout 600 apt-get update </dev/null >>"$LOG_DIR/apt.log" 2>&1 ||
      { show_tail "$LOG_DIR/apt.log"; die "apt-get update failed (log: $LOG_DIR/apt.log)" \
          "check that Debian's package mirrors are reachable, then rerun"; }
    touch "$RUN_DIR/apt-updated"
  fi
  local t0; t0=$(now_ms)
  log "apt-get install -y $*"
  as_root env DEBIAN_FRONTEND=noninteractive timeout 900 apt-get -o DPkg::Lock::Timeout=600 install -y "$@" </dev/null 8>&- 9>&- \
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

# mvn_run LOGFILE ARGS...: quiet, batch mode, bounded, against scripts/stack/kafka-pom.xml.
mvn_run() {
  local logfile=$1; shift
  need_mvn
  if ! MAVEN_OPTS="${MAVEN_OPTS:-$SHORT_JVM_OPTS}" timeout 900 mvn -B -q -Dstyle.color=never -f "$SCRIPT_DIR/stack/kafka-pom.xml" "$@" </dev/null 9>&- \
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
