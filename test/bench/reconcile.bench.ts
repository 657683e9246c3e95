// Reconciliation at scale (DESIGN.md section 5e): a partner day of BENCH_ENTRIES settled pay-ins
// (seeded straight into Postgres, balanced, as test/support/seed-ledger.ts describes) and its
// settlement statement of as many lines, uploaded: some left off, some charged a fee, some
// settled in batch lines that list what they settle. The day is reconciled against the service
// in a process of its own, timed, with the service's peak RSS; then the same day again, which
// finds every exception already known.
//
//   npm run bench:reconcile
//
// Settings (environment): BENCH_ENTRIES (100000), BENCH_PORT (3410).
import { performance } from 'node:perf_hooks';
import { createDb } from '../../src/db';
import { seedSettledPayIns, seededBusyStatementCsv } from '../support/seed-ledger';
import { benchNames, RUN_ID, rssMiB, runBench, startService, waitReady } from './harness';
import { postJson } from './open-loop';

const env = process.env;
const ENTRIES = Number(env.BENCH_ENTRIES ?? 100_000);
const PORT = Number(env.BENCH_PORT ?? 3410);
const DAY = '2026-01-15';
const MASTER_KEY = env.MASTER_KEY ?? 'mk_bench_reconcile_master_key_0123456789';
const names = benchNames('reconcile');

runBench(names, async (services) => {
  console.log(`reconciliation benchmark: ${ENTRIES} settled pay-ins on ${DAY}; run ${RUN_ID}`);
  const service = startService({ port: PORT, roles: 'all', databaseUrl: names.databaseUrl, extraEnv: { MASTER_KEY, RECONCILIATION_CHECK_MS: '0' } }, 'reconcile');
  services.push(service);
  await waitReady(service);
  const signUp = await fetch(`http://127.0.0.1:${PORT}/v1/sandbox/accounts`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: `bench-reconcile-${RUN_ID}@example.com`, password: 'bench-password-1234', business_name: 'Bench Reconcile Ltd', country_code: 'GB' }),
  });
  const account = await signUp.json() as { account: { id: string }; api_key: { key: string } };
  const customer = await postJson(PORT, '/v1/customers', { email: `customer-${RUN_ID}@example.com`, business_name: 'Bench Customer Ltd', country_code: 'GB' }, account.api_key.key);
  if (customer.status !== 201) throw new Error(`customer: ${customer.status} ${JSON.stringify(customer.body)}`);

  const db = createDb(names.databaseUrl);
  const seedStarted = performance.now();
  await seedSettledPayIns(db, account.account.id, customer.body.id, ENTRIES, DAY, 'bench');
  await db.destroy();
  const day = seededBusyStatementCsv(ENTRIES, DAY, 'bench');
  console.log(`seeded ${ENTRIES} pay-ins in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s; statement: ${day.plain} plain lines, ${day.withFee} with a fee, `
    + `${day.batched} pay-ins in ${day.batchLines} batch lines, ${day.missing} left off (${(day.csv.length / 2 ** 20).toFixed(1)} MiB)\n`);

  for (const run of ['first run', 'second run (exceptions known)']) {
    const baseMiB = rssMiB(service.child.pid!);
    let peakMiB = baseMiB;
    const sampler = setInterval(() => { peakMiB = Math.max(peakMiB, rssMiB(service.child.pid!)); }, 25);
    const started = performance.now();
    const answer = await postJson(PORT, '/v1/reconciliations', { partner: 'openbank', from: DAY, to: DAY, statement_csv: day.csv }, MASTER_KEY);
    const seconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    if (answer.status !== 201) throw new Error(`reconciliation: ${answer.status} ${JSON.stringify(answer.body).slice(0, 400)}`);
    console.log(`${run.padEnd(30)} ${seconds.toFixed(2).padStart(6)} s   ${Math.round(ENTRIES / seconds)} movements/s   service RSS ${baseMiB} → peak ${peakMiB} MiB (+${peakMiB - baseMiB})`);
    console.log(`${''.padEnd(30)} ${JSON.stringify(answer.body.summary)}   exceptions ${JSON.stringify(answer.body.exceptions)}`);
  }
});
