#!/usr/bin/env bash
# Installs node_modules when missing or older than the lockfile or a patch, then compiles what
# changed (scripts/build.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
log() { echo "[setup] $*"; }

if ! command -v node >/dev/null 2>&1; then
  echo "[setup] node is not installed: install Node.js 20 (e.g. apt-get install nodejs npm) and retry" >&2
  exit 1
fi
# A changed patch (patches/) needs the pristine package it was written against: install again.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ] ||
  [ -n "$(find patches -newer node_modules/.package-lock.json 2>/dev/null)" ]; then
  log "installing dependencies (npm ci)"
  npm ci --no-audit --no-fund --loglevel=error
fi
bash scripts/patch-dependencies.sh # a no-op once applied; npm ci's postinstall runs it too
bash scripts/build.sh
