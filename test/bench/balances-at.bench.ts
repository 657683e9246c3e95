// Balances at an instant (DESIGN.md section 5g): the answer time of `?at=` on an account with
// 1,000 postings and on one with 100,000, which must not grow with the history. The histories are
// seeded straight into Postgres (test/support/seed-ledger.ts: settled pay-ins, each a balanced
// entry whose postings carry their balance_after as the ledger writes it), then each account's
// main balance is read at BENCH_SAMPLES random instants of its day, one request at a time, the two
// accounts' reads alternating.
//
//   npm run bench:balances-at
//
// Settings (environment): BENCH_SAMPLES (300), BENCH_PORT (3410).
import { performance } from 'node:perf_hooks';
import { createDb } from '../../src/db';
import { prng } from '../support/prng';
import { seedSettledPayIns } from '../support/seed-ledger';
import { benchNames, percentile, RUN_ID, runBench, startService, waitReady } from './harness';
import { accountWithCustomer } from './open-loop';

const env = process.env;
const SAMPLES = Number(env.BENCH_SAMPLES ?? 300);
const PORT = Number(env.BENCH_PORT ?? 3410);
const DAY = '2026-01-15';
const names = benchNames('balances_at');

const account = (label: string) => accountWithCustomer(PORT, `at-${label}`);

runBench(names, async (services) => {
  console.log(`balances-at benchmark: ${SAMPLES} reads of ?at= per account; run ${RUN_ID}`);
  const service = startService({ port: PORT, roles: 'all', databaseUrl: names.databaseUrl }, 'balances-at');
  services.push(service);
  await waitReady(service);
  const db = createDb(names.databaseUrl);
  const random = prng(43);
  const start = Date.parse(`${DAY}T00:00:00Z`);
  try {
    const owners = [];
    for (const count of [1_000, 100_000]) {
      const owner = await account(String(count));
      const seedStarted = performance.now();
      await seedSettledPayIns(db, owner.id, owner.customerId, count, DAY, `at${count}`);
      owners.push({ count, key: owner.key, seeded: (performance.now() - seedStarted) / 1000, times: [] as number[] });
    }
    await db.raw('ANALYZE postings');
    // The two accounts' reads alternate, so a busy machine slows both alike.
    for (let i = 0; i < SAMPLES; i += 1) {
      for (const owner of owners) {
        const at = new Date(start + Math.floor(random() * 86_400_000)).toISOString();
        const started = performance.now();
        const response = await fetch(`http://127.0.0.1:${PORT}/v1/wallets/main/balances?at=${encodeURIComponent(at)}`, { headers: { authorization: `Bearer ${owner.key}` } });
        await response.text();
        if (response.status !== 200) throw new Error(`?at=${at}: ${response.status}`);
        owner.times.push(performance.now() - started);
      }
    }
    for (const { count, seeded, times } of owners) {
      times.sort((a, b) => a - b);
      console.log(`${String(count).padStart(7)} postings (seeded in ${seeded.toFixed(1)} s): ?at= answer median ${percentile(times, 0.5).toFixed(2)} ms, p95 ${percentile(times, 0.95).toFixed(2)} ms, p99 ${percentile(times, 0.99).toFixed(2)} ms`);
    }
  } finally {
    await db.destroy();
  }
});
