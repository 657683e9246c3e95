#!/usr/bin/env bash
# The stock fuzzer (schemathesis, from PyPI) against a service of its own: every operation of
# /v1/openapi.json with a secret key, a session and the master key. It reports server errors,
# answers the document does not declare, and requests the service rejected although the document
# allows them. Not part of `npm test` (it takes minutes); run it after changing a route.
#   bash scripts/schemathesis.sh            # FUZZ_EXAMPLES (25) cases per operation and credential
#   bash scripts/schemathesis.sh --include-path /v1/transfers   # further arguments go to each run
#   FUZZ_REPORT_DIR=/tmp/fuzz bash scripts/schemathesis.sh      # every exchange and case, per credential (HAR, NDJSON)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/stack-env.sh
source scripts/stack-env.sh
stack_env
command -v schemathesis >/dev/null 2>&1 || pip install --quiet schemathesis
run=$(date +%s)
port=${FUZZ_PORT:-3990}
log=$(mktemp)
# Quotes live 10 minutes here, not 30 s: the fuzzer executes quotes it made minutes before.
# A namespace of its own, named like a benchmark's, so the test hooks clean it up when it is old.
env DATABASE_URL="${DATABASE_URL%/*}/payments_bench_${run}" REDIS_KEY_PREFIX="bench:${run}:fuzz:" KAFKA_TOPIC_PREFIX="bench.${run}." \
  FX_QUOTE_LIFETIME_MS=600000 PORT="$port" MOCK_RAILS_PORT=$((port + 1)) RATE_LIMIT_RPS=100000 RATE_LIMIT_BURST=100000 LOG_LEVEL=warn \
  node dist/src/main.js >"$log" 2>&1 &
service=$!
trap 'kill $service 2>/dev/null; wait $service 2>/dev/null; rm -f "$log"' EXIT
base="http://127.0.0.1:$port"
export FUZZ_BASE_URL=$base
for _ in $(seq 120); do curl -sf "$base/readyz" >/dev/null 2>&1 && break; sleep 1; done
curl -sf "$base/readyz" >/dev/null || { cat "$log"; echo "the service did not become ready" >&2; exit 1; }
account=$(curl -s -X POST "$base/v1/sandbox/accounts" -H 'Content-Type: application/json' \
  -d "{\"email\":\"fuzz-$run@example.com\",\"password\":\"a long password\",\"business_name\":\"Fuzz Ltd\",\"country_code\":\"GB\",\"chain_wallet\":true}")
key=$(node -p 'JSON.parse(process.argv[1]).api_key.key' "$account")
token=$(node -p 'JSON.parse(process.argv[1]).session.token' "$account")
# The account every credential acts for (the master key names it), with money to move, and the
# recipient the document's transfer example names, so a request built from the examples succeeds.
FUZZ_ACCOUNT_ID=$(node -p 'JSON.parse(process.argv[1]).account.id' "$account")
export FUZZ_ACCOUNT_ID
for currency in USD EUR GBP USDC EURC; do
  curl -sf -X POST "$base/v1/sandbox/faucet" -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
    -H "Idempotency-Key: fuzz-$run-$currency" -d "{\"currency\":\"$currency\",\"amount\":\"100000.00\"}" >/dev/null
done
friend=$(curl -sf -X POST "$base/v1/sandbox/accounts" -H 'Content-Type: application/json' \
  -d '{"email":"friend@example.com","password":"a long password","business_name":"Friend Ltd","country_code":"GB","chain_wallet":true}')
# The recipient's bank accounts by currency: an external transfer in the sandbox pays only a
# registered account (SPEC.md section 1), which the hooks name for the fuzzer.
FUZZ_RECIPIENT_BANKS=$(curl -sf "$base/v1/accounts/me/vibans" -H "Authorization: Bearer $(node -p 'JSON.parse(process.argv[1]).session.token' "$friend")" \
  | node -p 'JSON.stringify(Object.fromEntries(JSON.parse(require("fs").readFileSync(0)).data.map((v) => [v.currency, v.account_number])))')
export FUZZ_RECIPIENT_BANKS
# A customer linked with every partner, whose funding methods the fuzzer lists: the customer
# approves each partner's consent page, as a browser would.
customer=$(curl -sf -X POST "$base/v1/customers" -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
  -H "Idempotency-Key: fuzz-$run-customer" -d '{"email":"linked@example.com","business_name":"Linked Ltd","country_code":"GB"}')
FUZZ_CUSTOMER_ID=$(node -p 'JSON.parse(process.argv[1]).id' "$customer")
export FUZZ_CUSTOMER_ID
for partner in openbank fiat chain claimless; do
  link=$(curl -sf -X POST "$base/v1/customers/$FUZZ_CUSTOMER_ID/partner-links" -H "Authorization: Bearer $key" \
    -H 'Content-Type: application/json' -H "Idempotency-Key: fuzz-$run-link-$partner" -d "{\"partner\":\"$partner\"}")
  authorize=$(node -p 'JSON.parse(process.argv[1]).authorize_url' "$link")
  consent_token=$(curl -sf "$authorize" | sed -n 's/.*name="consent_token" value="\([^"]*\)".*/\1/p')
  callback=$(curl -s -o /dev/null -w '%{redirect_url}' -X POST "$authorize" --data-urlencode "consent_token=$consent_token" -d decision=approve)
  curl -sf "$callback" >/dev/null || { echo "linking the fuzz customer with $partner failed" >&2; exit 1; }
done
master=${MASTER_KEY:-$(node -p 'require("./dist/src/config").loadConfig(process.env).masterKey')}
export FUZZ_MASTER_KEY=$master
status=0
for credential in "secret key:$key" "session:$token" "master key:$master"; do
  echo "== schemathesis with the ${credential%%:*}"
  FUZZ_TOKEN=${credential#*:} SCHEMATHESIS_HOOKS=scripts/schemathesis_hooks.py schemathesis --config-file scripts/schemathesis.toml run "$base/v1/openapi.json" \
    --max-examples "${FUZZ_EXAMPLES:-25}" --checks all --exclude-checks ignored_auth,positive_data_acceptance --no-color \
    --generation-allow-x00 false ${FUZZ_REPORT_DIR:+--report har,ndjson --report-har-path "$FUZZ_REPORT_DIR/${credential%%[ :]*}.har" --report-ndjson-path "$FUZZ_REPORT_DIR/${credential%%[ :]*}.ndjson"} "$@" || status=$?  # text fields take no NUL: Postgres cannot store it (400 naming the field)
done
exit $status
