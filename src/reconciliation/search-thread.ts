// The searching pass of a run (search.ts) in a worker thread, off the API's event loop. A day can
// leave tens of thousands of lines without reference, so the API's thread does no per-line work:
// it hands the worker the leftovers as the JSON text Postgres wrote, and gets back the items as
// the COPY text it sends to reconciliation_items, with their count. The run's budget bounds the
// work (the worker reports what it did not reach as `not_examined`); should the worker outlive its
// deadline by far, it is stopped and every leftover is reported alone, the lines not_examined,
// never matched.
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { Money } from '../../ledger/money';
import { copyText } from '../../ledger/pg/copy';
import { searchLeftovers } from './match-in-memory';
import type { LedgerMovement, MatchRules, ReportItem, StatementEntry } from './match';
import type { SearchBudget } from './search';
import { wallNowMs } from '../clock';

/** The sides as they cross to the worker: amounts as exact decimal text. */
export interface SearchJob {
  movements: Array<Omit<LedgerMovement, 'amount'> & { amount: string }>;
  lines: Array<Omit<StatementEntry, 'amount' | 'fee' | 'net'> & { amount: string; fee: string; net: string }>;
  rules: Omit<MatchRules, 'amountTolerance'> & { amountTolerance: string };
  budget: SearchBudget;
}

export interface SearchAnswer { items: ReportItem[]; notExamined: number }

/** Where the items go: their run, their first seq, and the columns of the COPY text, in order. */
export interface ItemsTarget { reconciliationId: string; seqFrom: number; columns: readonly string[] }

/** A search as the run hands it over: the sides as JSON arrays of SearchJob's shapes. */
export interface SearchTextJob {
  movementsJson: string;
  linesJson: string;
  rules: SearchJob['rules'];
  budget: SearchBudget;
  /** How long past the budget's deadline the worker is waited for. */
  graceMs: number;
  target: ItemsTarget;
}

/** The items as COPY text for reconciliation_items, their count, and the lines not examined. */
export interface SearchTextAnswer { copy: string; count: number; notExamined: number }

export const jobOf = (movements: LedgerMovement[], lines: StatementEntry[], rules: MatchRules, budget: SearchBudget): SearchJob => ({
  movements: movements.map((m) => ({ ...m, amount: m.amount.toFixed() })),
  lines: lines.map((l) => ({ ...l, amount: l.amount.toFixed(), fee: l.fee.toFixed(), net: l.net.toFixed() })),
  rules: { ...rules, amountTolerance: rules.amountTolerance.toFixed() },
  budget,
});

const sidesOf = (job: Pick<SearchJob, 'movements' | 'lines'>): { movements: LedgerMovement[]; lines: StatementEntry[] } => ({
  movements: job.movements.map((m) => ({ ...m, amount: new Money(m.amount) })),
  lines: job.lines.map((l) => ({
    ...l, amount: new Money(l.amount), fee: new Money(l.fee), net: new Money(l.net),
    settles: Array.isArray(l.settles) ? l.settles.filter((r): r is string => typeof r === 'string') : null,
  })),
});
const rulesOf = (rules: SearchJob['rules']): MatchRules => ({ ...rules, amountTolerance: new Money(rules.amountTolerance) });

/** Runs a job where it is: the search itself. */
export function runJob(job: SearchJob): SearchAnswer {
  const { movements, lines } = sidesOf(job);
  return searchLeftovers(movements, lines, rulesOf(job.rules), job.budget);
}

/** The items as COPY text rows of reconciliation_items. */
export function itemsCopy(items: ReportItem[], target: ItemsTarget): SearchTextAnswer['copy'] {
  const rows = items.map((item, i) => ({ reconciliation_id: target.reconciliationId, seq: target.seqFrom + i, ...item }));
  return copyText(target.columns as Array<keyof (typeof rows)[number] & string>, rows);
}

/** The worker's body: the sides parsed, searched, and the items written as COPY text. */
export function runTextJob(job: SearchTextJob): SearchTextAnswer {
  const answer = runJob({ movements: JSON.parse(job.movementsJson), lines: JSON.parse(job.linesJson), rules: job.rules, budget: job.budget });
  return { copy: itemsCopy(answer.items, job.target), count: answer.items.length, notExamined: answer.notExamined };
}

/**
 * The worker's answer, or null when it did not finish in time (it is stopped): the run then
 * reports every leftover alone, by Postgres (run.ts), never on this thread.
 */
export function searchInWorker(job: SearchTextJob): Promise<SearchTextAnswer | null> {
  const worker = new Worker(path.join(__dirname, 'search-worker.js'), { workerData: job });
  return new Promise<SearchTextAnswer | null>((resolve, reject) => {
    const timer = setTimeout(() => {
      void worker.terminate();
      resolve(null);
    }, Math.max(0, job.budget.deadline - wallNowMs()) + job.graceMs);
    worker.once('message', (answer: SearchTextAnswer) => { clearTimeout(timer); resolve(answer); void worker.terminate(); });
    worker.once('error', (error) => { clearTimeout(timer); reject(error); });
    worker.once('exit', (code) => { clearTimeout(timer); if (code !== 0) reject(new Error(`the matching worker stopped with code ${code}`)); });
  });
}
