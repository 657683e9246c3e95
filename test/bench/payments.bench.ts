// Add-funds benchmark: POST /v1/payments/add-funds at a steady rate (open loop: each request
// leaves at its scheduled time and its latency counts from that time, so a stall shows in the
// tail). Each request records the payment in the ledger, submits it to the openbank mock partner
// with the customer's link token and records the partner's answer: two ledger round trips and one
// partner call. The service runs as deployed (an api+notifier process, a consumers+rails process)
// on the real stack, in a database, topic prefix and Redis prefix of its own; the settler
// completes the payments in the background meanwhile.
//
//   npm run bench:payments
//
// Settings (environment): BENCH_RATE (50 requests/s), BENCH_DURATION_S (30), BENCH_WARMUP_S (5),
// BENCH_PORT (3300; the mock rails take the next port), and the stack addresses as in
// http.bench.ts.
import { linkCustomer } from '../support/partner-links';
import { benchNames, RUN_ID, runBench } from './harness';
import { openLoop, postJson, printOpenLoop, startSplitService } from './open-loop';

const env = process.env;
const RATE = Number(env.BENCH_RATE ?? 50);
const DURATION_S = Number(env.BENCH_DURATION_S ?? 30);
const WARMUP_S = Number(env.BENCH_WARMUP_S ?? 5);
const PORT = Number(env.BENCH_PORT ?? 3300);
const BASE = `http://127.0.0.1:${PORT}`;
const names = benchNames('payments');

runBench(names, async (services) => {
  console.log(`add-funds benchmark: ${RATE} req/s for ${DURATION_S} s after ${WARMUP_S} s warm-up; service on :${PORT}, run ${RUN_ID}`);
  services.push(...await startSplitService(PORT, names.databaseUrl, 'payments', { PUBLIC_URL: BASE })); // where the partner sends the browser back
  const servicePids = services.map((s) => s.child.pid!);
  const signUp = await postJson(PORT, '/v1/sandbox/accounts', { email: `bench-pay-${RUN_ID}@example.com`, password: 'bench-password-1234', business_name: 'Bench Pay Ltd', country_code: 'GB' }, null);
  const key: string = signUp.body.api_key.key;
  const customer = await postJson(PORT, '/v1/customers', { email: `bench-customer-${RUN_ID}@example.com`, business_name: 'Bench Customer', country_code: 'DE' }, key);
  await linkCustomer(BASE, key, customer.body.id, 'openbank');
  const body = { customer_id: customer.body.id, partner: 'openbank', amount: '10.00', currency: 'USD' };
  const result = await openLoop(RATE, WARMUP_S, DURATION_S, servicePids, () => postJson(PORT, '/v1/payments/add-funds', body, key).then((r) => r.status));
  printOpenLoop('POST /v1/payments/add-funds', RATE, DURATION_S, result, servicePids);
  if (result.statuses.size !== 1 || !result.statuses.has(201)) process.exitCode = 1;
});

