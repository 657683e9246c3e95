// Finance benchmark (DESIGN.md section 5e): a ledger of BENCH_ENTRIES settled pay-ins (seeded
// straight into Postgres, balanced, as test/support/seed-ledger.ts describes), then, against the
// service in a process of its own, timed with the service's peak RSS:
//  1. the journal export of the day, JSON Lines and CSV, read as a client streams it;
//  2. the reconciliation of the day against an uploaded statement of as many lines;
//  3. the account's statement of the day as CSV.
//
//   npm run bench:finance
//
// Settings (environment): BENCH_ENTRIES (100000), BENCH_PORT (3400).
import { performance } from 'node:perf_hooks';
import { createDb } from '../../src/db';
import { seedSettledPayIns, seededStatementCsv } from '../support/seed-ledger';
import { benchNames, RUN_ID, rssMiB, runBench, startService, waitReady, type BenchService } from './harness';
import { accountWithCustomer, postJson } from './open-loop';

const env = process.env;
const ENTRIES = Number(env.BENCH_ENTRIES ?? 100_000);
const PORT = Number(env.BENCH_PORT ?? 3400);
const DAY = '2026-01-15';
const MASTER_KEY = env.MASTER_KEY ?? 'mk_bench_finance_master_key_0123456789';
const names = benchNames('finance');

/** Runs `work` while sampling the service's RSS every 25 ms; its time and the peak. */
async function measured<T>(service: BenchService, work: () => Promise<T>): Promise<{ result: T; seconds: number; baseMiB: number; peakMiB: number }> {
  const baseMiB = rssMiB(service.child.pid!);
  let peakMiB = baseMiB;
  const sampler = setInterval(() => { peakMiB = Math.max(peakMiB, rssMiB(service.child.pid!)); }, 25);
  const started = performance.now();
  try {
    const result = await work();
    return { result, seconds: (performance.now() - started) / 1000, baseMiB, peakMiB };
  } finally {
    clearInterval(sampler);
  }
}

/** Streams a GET as a client would, counting bytes and lines, keeping nothing. */
async function download(path: string, token: string, accept: string): Promise<{ bytes: number; lines: number }> {
  const response = await fetch(`http://127.0.0.1:${PORT}${path}`, { headers: { authorization: `Bearer ${token}`, accept } });
  if (response.status !== 200) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  let bytes = 0;
  let lines = 0;
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.byteLength;
    for (const byte of chunk) if (byte === 10) lines += 1;
  }
  return { bytes, lines };
}

const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(1);
const report = (what: string, m: { seconds: number; baseMiB: number; peakMiB: number }, extra: string) =>
  console.log(`${what.padEnd(34)} ${m.seconds.toFixed(2).padStart(6)} s   service RSS ${m.baseMiB} → peak ${m.peakMiB} MiB (+${m.peakMiB - m.baseMiB})   ${extra}`);

runBench(names, async (services) => {
  console.log(`finance benchmark: ${ENTRIES} settled pay-ins on ${DAY}; run ${RUN_ID}`);
  const service = startService({ port: PORT, roles: 'all', databaseUrl: names.databaseUrl, extraEnv: { MASTER_KEY, RECONCILIATION_CHECK_MS: '0' } }, 'finance');
  services.push(service);
  await waitReady(service);
  const account = await accountWithCustomer(PORT, 'finance');

  const db = createDb(names.databaseUrl);
  const seedStarted = performance.now();
  const seeded = await seedSettledPayIns(db, account.id, account.customerId, ENTRIES, DAY, 'bench');
  await db.destroy();
  console.log(`seeded ${ENTRIES} entries (${2 * ENTRIES} postings, total ${seeded.total} USD) in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s\n`);

  const period = `from=${DAY}T00:00:00Z&to=${DAY}T23:59:59Z`;
  const jsonl = await measured(service, () => download(`/v1/ledger/journal?${period}`, MASTER_KEY, 'application/x-ndjson'));
  report('journal export, JSON Lines', jsonl, `${jsonl.result.lines} entries, ${mib(jsonl.result.bytes)} MiB, ${Math.round(jsonl.result.lines / jsonl.seconds)} entries/s`);
  const csv = await measured(service, () => download(`/v1/ledger/journal?${period}`, MASTER_KEY, 'text/csv'));
  report('journal export, CSV', csv, `${csv.result.lines - 1} postings, ${mib(csv.result.bytes)} MiB`);

  const statementCsv = seededStatementCsv(ENTRIES, DAY, 'bench');
  const reconciled = await measured(service, () => postJson(PORT, '/v1/reconciliations', { partner: 'openbank', from: DAY, to: DAY, statement_csv: statementCsv }, MASTER_KEY));
  if (reconciled.result.status !== 201) throw new Error(`reconciliation: ${reconciled.result.status} ${JSON.stringify(reconciled.result.body).slice(0, 400)}`);
  report('reconciliation (uploaded statement)', reconciled, `${JSON.stringify(reconciled.result.body.summary)}, statement ${mib(statementCsv.length)} MiB`);
  const items = await measured(service, () => download(`/v1/reconciliations/${reconciled.result.body.id}`, MASTER_KEY, 'text/csv'));
  report('reconciliation report, CSV', items, `${items.result.lines - 1} items, ${mib(items.result.bytes)} MiB`);
  const statement = await measured(service, () => download(`/v1/accounts/me/statement?currency=USD&${period}`, account.key, 'text/csv'));
  report('account statement, CSV', statement, `${statement.result.lines - 1} lines, ${mib(statement.result.bytes)} MiB`);
});
