#!/usr/bin/env bash
# Checks the types of the service, the tests and the dashboard (tsc, nothing emitted: the build is
# esbuild's, scripts/build.sh), only when a source changed since the last check that passed.
# npm test runs it beside the stack's start and fails when it fails.
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=scripts/sources.sh
source scripts/sources.sh
mkdir -p dist
checked=$(stamp "${service_sources[@]}")
[ "$checked" = "$(cat dist/.typecheck-stamp 2>/dev/null)" ] && exit 0
node_modules/.bin/tsc -p tsconfig.json --noEmit --incremental --tsBuildInfoFile dist/.typecheck.tsbuildinfo
node_modules/.bin/tsc -p src/dashboard/tsconfig.json
echo "$checked" > dist/.typecheck-stamp
