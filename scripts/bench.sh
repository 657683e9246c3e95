#!/usr/bin/env bash
# `npm run bench:<name>`: the stack, a fresh build, then test/bench/<name>.bench.ts.
set -euo pipefail
name="${1:?usage: bench.sh http|ledger|latency|fx|payments|webhooks|finance|reconcile|balances-at|metadata}"
exec bash "$(dirname "$0")/with-stack.sh" node "dist/test/bench/${name}.bench.js"
