#!/usr/bin/env bash
# Compiles the service and the tests into dist (esbuild: the types are stripped, not checked;
# scripts/typecheck.sh checks them), and the browser dashboard into dist/dashboard, only when a
# source changed since the last build (a stamp of every source's path, size and time): `npm
# start` after `npm test` starts at once.
set -euo pipefail
cd "$(dirname "$0")/.."
log() { echo "[setup] $*"; }

# shellcheck source=scripts/sources.sh
source scripts/sources.sh
dashboard_sources=(src/dashboard scripts/build-dashboard.mjs package-lock.json)

mkdir -p dist
service_stamp=$(stamp "${service_sources[@]}")
if [ "$service_stamp" != "$(cat dist/.service-stamp 2>/dev/null)" ]; then
  log "compiling the service and the tests"
  node scripts/build-service.mjs
  node scripts/prune-dist.mjs
  echo "$service_stamp" > dist/.service-stamp
fi
dashboard_stamp=$(stamp "${dashboard_sources[@]}")
if [ "$dashboard_stamp" != "$(cat dist/.dashboard-stamp 2>/dev/null)" ] || [ ! -f dist/dashboard/index.html ]; then
  log "building the dashboard"
  node scripts/build-dashboard.mjs
  echo "$dashboard_stamp" > dist/.dashboard-stamp
fi
