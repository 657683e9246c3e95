// The searching pass of a run (search.ts) in a worker thread, off the API's event loop: a run
// hands it the leftovers as text and gets the items back. The run's budget bounds the work (the
// worker reports what it did not reach as `not_examined`); should the worker outlive its deadline
// by far, it is stopped and every leftover is reported not_examined, never matched.
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { Money } from '../../ledger/money';
import { searchLeftovers } from './match-in-memory';
import { NOT_EXAMINED, REASONS, sideOf, format, type LedgerMovement, type MatchRules, type ReportItem, type StatementEntry } from './match';
import type { SearchBudget } from './search';

/** The sides as they cross to the worker: amounts as exact decimal text. */
export interface SearchJob {
  movements: Array<Omit<LedgerMovement, 'amount'> & { amount: string }>;
  lines: Array<Omit<StatementEntry, 'amount' | 'fee' | 'net'> & { amount: string; fee: string; net: string }>;
  rules: Omit<MatchRules, 'amountTolerance'> & { amountTolerance: string };
  budget: SearchBudget;
}

export interface SearchAnswer { items: ReportItem[]; notExamined: number }

export const jobOf = (movements: LedgerMovement[], lines: StatementEntry[], rules: MatchRules, budget: SearchBudget): SearchJob => ({
  movements: movements.map((m) => ({ ...m, amount: m.amount.toFixed() })),
  lines: lines.map((l) => ({ ...l, amount: l.amount.toFixed(), fee: l.fee.toFixed(), net: l.net.toFixed() })),
  rules: { ...rules, amountTolerance: rules.amountTolerance.toFixed() },
  budget,
});

/** Runs a job where it is: the worker's body, and the fallback for a handful of sides. */
export function runJob(job: SearchJob): SearchAnswer {
  const movements = job.movements.map((m) => ({ ...m, amount: new Money(m.amount) }));
  const lines = job.lines.map((l) => ({ ...l, amount: new Money(l.amount), fee: new Money(l.fee), net: new Money(l.net) }));
  return searchLeftovers(movements, lines, { ...job.rules, amountTolerance: new Money(job.rules.amountTolerance) }, job.budget);
}

/** Every leftover alone, the lines not_examined: the answer when the worker could not finish. */
function nothingExamined(movements: LedgerMovement[], lines: StatementEntry[], rules: MatchRules): SearchAnswer {
  const inRange = (date: string) => date >= rules.from && date <= rules.to;
  const items: ReportItem[] = [];
  const none = { field: null, ledger_value: null, statement_value: null, candidates: null, statement_line_id: null, statement_amount: null } as const;
  for (const m of movements) {
    if (inRange(m.date)) items.push({ ...none, category: 'ledger_only', ledger_entry_id: m.entryId, reference: m.reference, currency: m.currency, ledger_amount: format(m.amount, m.currency), reason: REASONS.noLine, movements: [sideOf(m)] });
  }
  for (const l of lines) {
    if (inRange(l.valueDate)) items.push({ ...none, category: 'statement_only', ledger_entry_id: null, statement_line_id: l.lineId, reference: l.reference, currency: l.currency, ledger_amount: null, statement_amount: format(l.net, l.currency), reason: NOT_EXAMINED, movements: [] });
  }
  return { items, notExamined: lines.length };
}

/** The worker stops being waited for this long after its deadline. */
const GRACE_MS = 5_000;

export function searchInWorker(movements: LedgerMovement[], lines: StatementEntry[], rules: MatchRules, budget: SearchBudget): Promise<SearchAnswer> {
  const worker = new Worker(path.join(__dirname, 'search-worker.js'), { workerData: jobOf(movements, lines, rules, budget) });
  return new Promise<SearchAnswer>((resolve, reject) => {
    const timer = setTimeout(() => {
      void worker.terminate();
      resolve(nothingExamined(movements, lines, rules));
    }, Math.max(0, budget.deadline - Date.now()) + GRACE_MS);
    worker.once('message', (answer: SearchAnswer) => { clearTimeout(timer); resolve(answer); void worker.terminate(); });
    worker.once('error', (error) => { clearTimeout(timer); reject(error); });
    worker.once('exit', (code) => { clearTimeout(timer); if (code !== 0) reject(new Error(`the matching worker stopped with code ${code}`)); });
  });
}
