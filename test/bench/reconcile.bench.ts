// Reconciliation at scale (DESIGN.md section 5e): BENCH_DAYS busy partner days of BENCH_ENTRIES
// settled pay-ins each, seeded straight into Postgres on both sides (the ledger, balanced, and
// openbank's book, as test/support/seed-ledger.ts describes), so that the partner's statements
// list them: some left off, some charged a fee, some settled in a batch line that lists what it
// settles. The service reconciles against the partner's statements as it does for a client,
// timed, with its peak RSS: a day alone (one in the middle), then every day in one request. The partner
// runs in a process of its own, so the service's memory is the service's.
//
//   npm run bench:reconcile
//
// Settings (environment): BENCH_ENTRIES (100000 per day), BENCH_DAYS (1), BENCH_PORT (3410).
import { performance } from 'node:perf_hooks';
import { createDb } from '../../src/db';
import { seedPartnerBook, seedSettledPayIns } from '../support/seed-ledger';
import { benchNames, RUN_ID, rssMiB, runBench, startService, waitReady, type BenchService } from './harness';
import { accountWithCustomer, postJson } from './open-loop';
import { daysAfter } from '../support/days';

const env = process.env;
const ENTRIES = Number(env.BENCH_ENTRIES ?? 100_000);
const DAYS = Number(env.BENCH_DAYS ?? 1);
const PORT = Number(env.BENCH_PORT ?? 3410);
const FIRST_DAY = '2026-01-15';
const MASTER_KEY = env.MASTER_KEY ?? 'mk_bench_reconcile_master_key_0123456789';
const names = benchNames('reconcile');

async function reconcileTimed(service: BenchService, label: string, from: string, to: string, movements: number): Promise<void> {
  const baseMiB = rssMiB(service.child.pid!);
  let peakMiB = baseMiB;
  const sampler = setInterval(() => { peakMiB = Math.max(peakMiB, rssMiB(service.child.pid!)); }, 25);
  const started = performance.now();
  const answer = await postJson(PORT, '/v1/reconciliations', { partner: 'openbank', from, to }, MASTER_KEY);
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  if (answer.status !== 201) throw new Error(`reconciliation: ${answer.status} ${JSON.stringify(answer.body).slice(0, 400)}`);
  console.log(`${label.padEnd(28)} ${seconds.toFixed(2).padStart(7)} s   ${String(Math.round(movements / seconds)).padStart(6)} movements/s   service RSS ${baseMiB} → peak ${peakMiB} MiB (+${peakMiB - baseMiB})`);
  console.log(`${''.padEnd(28)} ${JSON.stringify(answer.body.summary)}   exceptions ${JSON.stringify(answer.body.exceptions)}`);
  const phases = service.output.filter((line) => line.includes('"msg":"reconciliation matched"')).pop();
  if (phases) console.log(`${''.padEnd(28)} ms per phase ${JSON.stringify(JSON.parse(phases).ms)}`);
  const recorded = service.output.filter((line) => line.includes('"msg":"reconciliation recorded"')).pop();
  if (recorded) console.log(`${''.padEnd(28)} ms recording ${JSON.stringify(JSON.parse(recorded).ms)}`);
}

runBench(names, async (services) => {
  console.log(`reconciliation benchmark: ${DAYS} day(s) of ${ENTRIES} settled pay-ins from ${FIRST_DAY}; run ${RUN_ID}`);
  const extraEnv = { MASTER_KEY, RECONCILIATION_CHECK_MS: '0' };
  // At info, the service logs where each run spent its time (run.ts), which this prints.
  const service = startService({ port: PORT, roles: 'api,ledger,partners,notifier,webhooks,request-logs', databaseUrl: names.databaseUrl, extraEnv: { ...extraEnv, LOG_LEVEL: 'info' } }, 'reconcile');
  services.push(service);
  await waitReady(service); // it creates the database and brings its schema up to date first
  const partner = startService({ port: PORT, roles: 'mock-rails', databaseUrl: names.databaseUrl, extraEnv: { ...extraEnv, LOG_LEVEL: 'info' } }, 'reconcile');
  services.push(partner);
  await waitReady(partner, false);
  const account = await accountWithCustomer(PORT, 'reconcile');

  const db = createDb(names.databaseUrl);
  const seedStarted = performance.now();
  for (let n = 0; n < DAYS; n += 1) {
    await seedSettledPayIns(db, account.id, account.customerId, ENTRIES, daysAfter(FIRST_DAY, n), `bench_d${n}`);
    await seedPartnerBook(db, ENTRIES, daysAfter(FIRST_DAY, n), `bench_d${n}`);
  }
  // The visibility map and the planner's statistics as autovacuum leaves them on a database that
  // grew for days (right after a bulk load, autovacuum works through the new rows beside the runs).
  await db.raw('VACUUM ANALYZE').options({ query_timeout: 0 });
  await db.destroy();
  console.log(`seeded ${DAYS} × ${ENTRIES} pay-ins on both sides in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s; each day: `
    + `${ENTRIES / 50} left off the statement, ${Math.round(ENTRIES * 0.98 / 20)} with a fee, about ${Math.round(ENTRIES * 0.98 * 0.95 / 10)} in the batch line\n`);

  // A day with busy days on both sides when there are three or more: the run reads its neighbours
  // too (the date tolerance), as every day but the first and the last of a month does.
  const day = daysAfter(FIRST_DAY, DAYS >= 3 ? Math.floor(DAYS / 2) : 0);
  await reconcileTimed(service, `one day (${day})`, day, day, ENTRIES);
  await reconcileTimed(service, 'the same day again', day, day, ENTRIES);
  if (DAYS > 1) await reconcileTimed(service, `${DAYS} days in one request`, FIRST_DAY, daysAfter(FIRST_DAY, DAYS - 1), ENTRIES * DAYS);
});
