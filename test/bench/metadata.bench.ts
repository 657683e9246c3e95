// Finding a transfer by its metadata (DESIGN.md section 5h, "Finding things"): the answer time of
// GET /v1/transfers?metadata[order_id]=<one order> on an account with 1,000 transfers and on one
// with 100,000, which must not grow with the history (the partial GIN index transfers_metadata,
// migrations/20261205100000_metadata.ts). The transfers are seeded straight into Postgres (one
// INSERT ... SELECT each: completed book transfers a second apart, each with its own order_id and
// one of two channels), then each account is asked for one of its orders, drawn at random,
// BENCH_SAMPLES times, one request at a time, the two accounts' requests alternating so a busy
// machine slows both alike. Every answer must be 200 with exactly the transfer asked for.
//
//   npm run bench:metadata
//
// Settings (environment): BENCH_SAMPLES (300), BENCH_PORT (3420).
import { performance } from 'node:perf_hooks';
import { createDb, type Db } from '../../src/db';
import { whereMetadata } from '../../src/db/keyset-pages';
import { prng } from '../support/prng';
import { insertAccount } from '../support/seed-ledger';
import { benchNames, percentile, RUN_ID, runBench, startService, waitReady } from './harness';
import { accountWithCustomer } from './open-loop';

const env = process.env;
const SAMPLES = Number(env.BENCH_SAMPLES ?? 300);
const PORT = Number(env.BENCH_PORT ?? 3420);
const COUNTS = [1_000, 100_000];
const names = benchNames('metadata');

/** `count` completed transfers of `accountId` to `payeeId`, order_id `<label>-<n>` for n = 1..count, in one statement. */
async function seedTransfers(db: Db, accountId: string, payeeId: string, count: number, label: string): Promise<void> {
  await db.raw(
    `INSERT INTO transfers (id, account_id, command_id, type, status, amount, currency, payout_amount, payout_currency, recipient_account_id, recipient,
                            partner, partner_payment_id, estimated_arrival, status_history, created_at, updated_at, completed_at, metadata)
     SELECT gen_random_uuid(), ?, 'bench-metadata-' || s.label || '-' || n, 'internal', 'completed', 1, 'USD', 1, 'USD', ?,
            jsonb_build_object('email', 'payee@example.com'), 'book', 'book_bench_' || n, 'instant', '[]'::jsonb, at, at, at,
            jsonb_build_object('order_id', s.label || '-' || n, 'channel', CASE WHEN n % 2 = 0 THEN 'web' ELSE 'app' END)
       FROM (SELECT ?::text AS label) AS s, generate_series(1, ?) AS n, LATERAL (SELECT timestamptz '2026-01-15T00:00:00Z' + n * interval '1 second') AS t(at)`,
    [accountId, payeeId, label, count],
  );
}

/**
 * How Postgres answers the list's query for one order (built as src/transfers/reads.ts builds it,
 * the first page): the plan's scan nodes and its execution time, from EXPLAIN ANALYZE.
 */
async function planOf(db: Db, accountId: string, order: string): Promise<string> {
  const query = whereMetadata(db('transfers').where('account_id', accountId).select('*'), 'transfers.metadata', { order_id: order })
    .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }]).limit(51);
  const { sql, bindings } = query.toSQL();
  const { rows } = await db.raw(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, bindings as readonly string[]);
  const lines = (rows as Array<{ 'QUERY PLAN': string }>).map((r) => r['QUERY PLAN'].trim());
  return lines.filter((line) => /Scan|Execution Time/.test(line)).map((line) => line.replace(/\s+\(cost=[^)]*\)/, '')).join('; ');
}

runBench(names, async (services) => {
  console.log(`metadata benchmark: ${SAMPLES} lookups of metadata[order_id] per account; run ${RUN_ID}`);
  const service = startService({ port: PORT, roles: 'all', databaseUrl: names.databaseUrl, extraEnv: { RATE_LIMIT_RPS: '1000000', RATE_LIMIT_BURST: '1000000' } }, 'metadata');
  services.push(service);
  await waitReady(service);
  const db = createDb(names.databaseUrl);
  const random = prng(47);
  try {
    const payeeId = await insertAccount(db, 'bench-metadata-payee');
    const owners = [];
    for (const count of COUNTS) {
      const owner = await accountWithCustomer(PORT, `metadata-${count}`);
      const label = `O${count}`;
      const started = performance.now();
      await seedTransfers(db, owner.id, payeeId, count, label);
      owners.push({ count, label, id: owner.id, key: owner.key, seeded: (performance.now() - started) / 1000, times: [] as number[] });
    }
    await db.raw('ANALYZE transfers');
    for (let i = 0; i < SAMPLES; i += 1) {
      for (const owner of owners) {
        const order = `${owner.label}-${1 + Math.floor(random() * owner.count)}`;
        const started = performance.now();
        const response = await fetch(`http://127.0.0.1:${PORT}/v1/transfers?${new URLSearchParams({ 'metadata[order_id]': order })}`, { headers: { authorization: `Bearer ${owner.key}` } });
        const body = await response.json() as { data: Array<{ metadata: Record<string, string> }> };
        owner.times.push(performance.now() - started);
        if (response.status !== 200 || body.data.length !== 1 || body.data[0].metadata.order_id !== order) {
          throw new Error(`metadata[order_id]=${order}: ${response.status} ${JSON.stringify(body).slice(0, 300)}`);
        }
      }
    }
    const medians: number[] = [];
    for (const { count, seeded, times, id, label } of owners) {
      times.sort((a, b) => a - b);
      medians.push(percentile(times, 0.5));
      console.log(`${String(count).padStart(7)} transfers (seeded in ${seeded.toFixed(1)} s): metadata lookup median ${percentile(times, 0.5).toFixed(2)} ms, p95 ${percentile(times, 0.95).toFixed(2)} ms, p99 ${percentile(times, 0.99).toFixed(2)} ms`);
      console.log(`        its query: ${await planOf(db, id, `${label}-${count}`)}`);
    }
    console.log(`ratio of the medians, ${COUNTS[1].toLocaleString('en')} / ${COUNTS[0].toLocaleString('en')}: ${(medians[1] / medians[0]).toFixed(2)} (target: within 2)`);
  } finally {
    await db.destroy();
  }
});
