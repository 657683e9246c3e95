#!/usr/bin/env bash
# The service's secrets (src/secrets.ts), made once and kept in one file, so every restart and
# every role process uses the same ones (data sealed with one vault key opens only with it).
#
#   bash scripts/secrets.sh FILE    writes FILE (mode 600) with a strong value for each secret it
#                                   lacks, keeps those it has, and prints where they are kept
#
# Sourced (start.sh, container-start.sh) it defines ensure_secrets FILE, and export_secrets FILE,
# which exports each secret of FILE that the environment does not already set.
set -euo pipefail

SECRET_NAMES=(MASTER_KEY JWT_SECRET PARTNER_CLIENT_SECRET PARTNER_TOKEN_SECRET WEBHOOK_SECRET_KEY MOCK_RAILS_CONTROL_SECRET)

# 32 random bytes, base64url without padding; the master key keeps its mk_ prefix.
new_secret() {
  local value
  value=$(head -c 32 /dev/urandom | base64 | tr -d '\n=' | tr '+/' '-_')
  if [[ $1 == MASTER_KEY ]]; then echo "mk_$value"; else echo "$value"; fi
}

ensure_secrets() {
  local file=$1 name added=()
  mkdir -p "$(dirname "$file")"
  (
    # Several processes may start at once (docker compose): one writes, the others wait and read.
    flock -w 60 8 || { echo "[secrets] could not lock $file.lock" >&2; exit 1; }
    umask 077
    touch "$file"
    chmod 600 "$file"
    for name in "${SECRET_NAMES[@]}"; do
      if ! grep -q "^$name=" "$file"; then
        echo "$name=$(new_secret "$name")" >> "$file"
        added+=("$name")
      fi
    done
    if (( ${#added[@]} > 0 )); then
      echo "[secrets] generated ${added[*]} in $file (kept there for every later start; delete the file to make new ones)" >&2
    else
      echo "[secrets] using the secrets kept in $file" >&2
    fi
  ) 8>"$file.lock"
}

export_secrets() {
  local file=$1 name value
  while IFS='=' read -r name value; do
    [[ -n $name && -z ${!name:-} ]] || continue
    export "$name=$value"
  done < "$file"
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  [[ $# -eq 1 ]] || { echo "usage: scripts/secrets.sh FILE" >&2; exit 2; }
  ensure_secrets "$1"
fi
