#!/usr/bin/env bash
# Checks the types of the service, the tests and the dashboard (tsc, nothing emitted: the build is
# esbuild's, scripts/build.sh), only when a source changed since the last check that passed.
# npm test runs it beside the stack's start and fails when it fails.
set -euo pipefail
cd "$(dirname "$0")/.."

stamp() { find "$@" -type f -printf '%p\t%s\t%T@\n' 2>/dev/null | sort | sha1sum | cut -d' ' -f1; }
sources=(src ledger consumers migrations test scripts tsconfig.json package-lock.json)
mkdir -p dist
checked=$(stamp "${sources[@]}")
[ "$checked" = "$(cat dist/.typecheck-stamp 2>/dev/null)" ] && exit 0
node_modules/.bin/tsc -p tsconfig.json --noEmit --incremental --tsBuildInfoFile dist/.typecheck.tsbuildinfo
node_modules/.bin/tsc -p src/dashboard/tsconfig.json
echo "$checked" > dist/.typecheck-stamp
