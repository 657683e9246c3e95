// FX execution benchmark: POST /v1/fx/execute at a steady rate (open loop: each request leaves at
// its scheduled time, whatever the earlier ones are doing, and its latency counts from that time,
// so a stall shows in the tail instead of slowing the load). The service runs as deployed
// (docker-compose.yml): one process for api+notifier, one for the consumers and the mock rails,
// on the real stack, in a database, topic prefix and Redis prefix of its own. Every execution
// needs a quote of its own: a background loop keeps a pool of fresh persisted quotes ahead of the
// schedule; their creation is timed apart.
//
//   npm run bench:fx
//
// Settings (environment): BENCH_RATE (50 requests/s), BENCH_DURATION_S (30), BENCH_WARMUP_S (5),
// BENCH_PORT (3200; the mock rails take the next port), and the stack addresses as in
// http.bench.ts.
import { benchNames, percentile, RUN_ID, runBench, sleep } from './harness';
import { openLoop, postJson, printOpenLoop, startSplitService } from './open-loop';

const env = process.env;
const RATE = Number(env.BENCH_RATE ?? 50);
const DURATION_S = Number(env.BENCH_DURATION_S ?? 30);
const WARMUP_S = Number(env.BENCH_WARMUP_S ?? 5);
const PORT = Number(env.BENCH_PORT ?? 3200);
const POOL_TARGET = RATE * 2; // two seconds of quotes ahead
const QUOTE_MAX_AGE_MS = 15_000; // well inside the 30-second lifetime
const names = benchNames('fx');

/** Keeps `pool` filled with fresh quotes until `stop.now`; records how long each took to create. */
async function fillQuotes(key: string, pool: Array<{ id: string; at: number }>, quoteMs: number[], stop: { now: boolean }): Promise<void> {
  const pairs = [['USD', 'EUR'], ['EUR', 'USD'], ['USD', 'GBP'], ['GBP', 'EUR']];
  let i = 0;
  const worker = async () => {
    while (!stop.now) {
      while (pool.length > 0 && Date.now() - pool[0].at > QUOTE_MAX_AGE_MS) pool.shift();
      if (pool.length >= POOL_TARGET) { await sleep(20); continue; }
      const [from, to] = pairs[i++ % pairs.length];
      const started = performance.now();
      const quote = await postJson(PORT, '/v1/fx/quote', { from_currency: from, to_currency: to, from_amount: '10.00' }, key);
      quoteMs.push(performance.now() - started);
      if (quote.status !== 201) throw new Error(`quote failed: ${quote.status} ${JSON.stringify(quote.body)}`);
      pool.push({ id: quote.body.id, at: Date.now() });
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
}

runBench(names, async (services) => {
  console.log(`FX execute benchmark: ${RATE} req/s for ${DURATION_S} s after ${WARMUP_S} s warm-up; service on :${PORT}, run ${RUN_ID}`);
  services.push(...await startSplitService(PORT, names.databaseUrl, 'fx'));
  const servicePids = services.map((s) => s.child.pid!);
  const signUp = await fetch(`http://127.0.0.1:${PORT}/v1/sandbox/accounts`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: `bench-fx-${RUN_ID}@example.com`, password: 'bench-password-1234', business_name: 'Bench FX Ltd', country_code: 'GB' }),
  }).then((r) => r.json() as Promise<{ api_key: { key: string } }>);
  const key: string = signUp.api_key.key;
  for (const currency of ['USD', 'EUR', 'GBP']) {
    const funded = await postJson(PORT, '/v1/sandbox/faucet', { currency, amount: '1000000.00' }, key);
    if (funded.status !== 201) throw new Error(`funding failed: ${funded.status} ${JSON.stringify(funded.body)}`);
  }

  const pool: Array<{ id: string; at: number }> = [];
  const quoteMs: number[] = [];
  const stop = { now: false };
  const filling = fillQuotes(key, pool, quoteMs, stop);
  while (pool.length < POOL_TARGET) await sleep(50);
  const result = await openLoop(RATE, WARMUP_S, DURATION_S, servicePids, () => {
    const quote = pool.shift();
    return quote ? postJson(PORT, '/v1/fx/execute', { quote_id: quote.id }, key).then((r) => r.status) : null;
  });
  stop.now = true;
  await filling;
  printOpenLoop('POST /v1/fx/execute', RATE, DURATION_S, result, servicePids);
  quoteMs.sort((a, b) => a - b);
  console.log(`  POST /v1/fx/quote (background, ${quoteMs.length}): p50 ${percentile(quoteMs, 0.5).toFixed(2)} ms, p99 ${percentile(quoteMs, 0.99).toFixed(2)} ms`);
  if (result.statuses.size !== 1 || !result.statuses.has(201)) process.exitCode = 1;
});

