// Writes a decided round's rows. A large round goes table by table with COPY, which Postgres
// parses fastest for thousands of rows but which costs two round trips a table. At light load a
// round holds a command or two, and those round trips were most of the ledger's work per
// transfer: a small round is written instead by one statement, every table a data-modifying
// CTE fed by a JSON parameter. Its rows are checked as COPY's are: the postings trigger sees all
// of them at the end of the statement, and foreign keys are checked then too, so the order of
// the CTEs does not matter. Updates are one statement per table either way.
import type { Knex } from 'knex';
import { copyInto } from '../src/db/pg-copy';
import type { AppliedPosting, LedgerAccountState } from './balances';
import type { FxQuoteRecord } from './fx-quotes';
import type { PaymentRecord, PaymentStatus } from './payments';
import type { TransferRecord, TransferStatus } from './transfers';

export interface EntryWrite {
  id: string;
  kind: string;
  commandId: string;
  transferId: string | null;
  quoteId: string | null;
  paymentId: string | null;
  postings: AppliedPosting[];
}

export interface OutboxWrite {
  id: string;
  topic: string;
  key: string;
  accountId: string | null;
  payload: unknown;
  /** For an account's domain event: its number in the account's sequence, set by writeBatch. */
  accountSeq?: number;
}

export interface BatchWrite {
  entries: EntryWrite[];
  balances: LedgerAccountState[];
  newTransfers: TransferRecord[];
  changedTransfers: TransferRecord[];
  transitions: Array<{ transferId: string; from: TransferStatus | null; to: TransferStatus; at: Date }>;
  /** Quotes executed in this batch, with their consumed_at. */
  consumedQuotes: FxQuoteRecord[];
  newPayments: PaymentRecord[];
  changedPayments: PaymentRecord[];
  paymentTransitions: Array<{ paymentId: string; from: PaymentStatus | null; to: PaymentStatus; at: Date }>;
  /** Each decided command with its outcome's JSON text, and the Idempotency-Key it is the record of (DESIGN.md section 5f). */
  processed: Array<{ commandId: string; type: string; outcome: string; accountId: string | null; idempotencyKey: string | null; fingerprint: string | null }>;
  outbox: OutboxWrite[];
  /** The round (transaction) the outbox rows belong to, for tracking their publication. */
  roundId: string;
  now: Date;
}

/** A round of at most this many commands is written by one statement. */
export const ONE_STATEMENT_COMMANDS_MAX = 64;

const TRANSFER_COLUMNS = [
  'id', 'account_id', 'command_id', 'type', 'status', 'amount', 'currency', 'payout_amount', 'payout_currency', 'fx_rate', 'fx_mid_rate', 'fx_spread', 'recipient_account_id', 'recipient', 'note', 'partner',
  'partner_payment_id', 'failure_code', 'failure_message', 'estimated_arrival', 'created_at', 'updated_at', 'completed_at', 'status_history',
] as const;
const PAYMENT_COLUMNS = [
  'id', 'account_id', 'customer_id', 'command_id', 'partner', 'direction', 'kind', 'amount', 'currency', 'status', 'external_id', 'claim_link',
  'idempotency_key', 'retry_count', 'funding_method_external_id', 'payee', 'purpose', 'failure_code', 'failure_message', 'created_at', 'updated_at', 'completed_at', 'status_history',
] as const;
const ENTRY_COLUMNS = ['id', 'kind', 'command_id', 'transfer_id', 'fx_quote_id', 'payment_id', 'created_at'] as const;
const POSTING_COLUMNS = ['id', 'entry_id', 'ledger_account_id', 'account_id', 'currency', 'amount', 'balance_after', 'transfer_id', 'created_at'] as const;
const PROCESSED_COLUMNS = ['command_id', 'type', 'outcome', 'processed_at', 'account_id', 'idempotency_key', 'fingerprint'] as const;
export const ACCOUNT_EVENT_COLUMNS = ['account_id', 'account_seq', 'id', 'payload'] as const;

type Row = Record<string, unknown>;

/** Inserts the rows of a JSON array parameter into a table, by column name. */
const insertFromJson = (table: string, columns: readonly string[]) =>
  `INSERT INTO ${table} (${columns.join(', ')}) SELECT ${columns.join(', ')} FROM jsonb_populate_recordset(NULL::${table}, ?::jsonb)`;

// Each update takes a JSON array of rows with the table's column names; status histories append.
const UPDATE_PAYMENTS = `UPDATE payments AS p SET status = v.status, external_id = v.external_id, claim_link = v.claim_link, retry_count = v.retry_count,
    failure_code = v.failure_code, failure_message = v.failure_message, updated_at = v.updated_at, completed_at = v.completed_at,
    status_history = p.status_history || v.status_history
  FROM jsonb_populate_recordset(NULL::payments, ?::jsonb) AS v WHERE p.id = v.id`;
const UPDATE_TRANSFERS = `UPDATE transfers AS t SET status = v.status, partner_payment_id = v.partner_payment_id, failure_code = v.failure_code,
    failure_message = v.failure_message, updated_at = v.updated_at, completed_at = v.completed_at,
    status_history = t.status_history || v.status_history
  FROM jsonb_populate_recordset(NULL::transfers, ?::jsonb) AS v WHERE t.id = v.id`;
const UPDATE_BALANCES = 'UPDATE ledger_accounts AS la SET balance = v.balance FROM jsonb_populate_recordset(NULL::ledger_accounts, ?::jsonb) AS v WHERE la.id = v.id';
// Executed quotes were locked and found unconsumed: the count returned must be theirs.
const CONSUME_QUOTES = 'UPDATE fx_quotes AS q SET consumed_at = v.consumed_at FROM jsonb_populate_recordset(NULL::fx_quotes, ?::jsonb) AS v WHERE q.id = v.id AND q.consumed_at IS NULL RETURNING 1';
export const INSERT_ROUND = 'INSERT INTO outbox_rounds (round_id, created_at, messages, events) SELECT round_id, created_at, messages, events FROM jsonb_populate_recordset(NULL::outbox_rounds, ?::jsonb)';
const DELETE_PUBLISHED = 'DELETE FROM outbox_rounds WHERE round_id = ANY(?::uuid[])';

const ONE_STATEMENT = `WITH
  new_payments AS (${insertFromJson('payments', PAYMENT_COLUMNS)}),
  changed_payments AS (${UPDATE_PAYMENTS}),
  entries AS (${insertFromJson('journal_entries', ENTRY_COLUMNS)}),
  postings AS (${insertFromJson('postings', POSTING_COLUMNS)}),
  balances AS (${UPDATE_BALANCES}),
  new_transfers AS (${insertFromJson('transfers', TRANSFER_COLUMNS)}),
  changed_transfers AS (${UPDATE_TRANSFERS}),
  consumed_quotes AS (${CONSUME_QUOTES}),
  processed AS (${insertFromJson('processed_commands', PROCESSED_COLUMNS)}),
  events AS (${insertFromJson('account_events', ACCOUNT_EVENT_COLUMNS)}),
  round AS (${INSERT_ROUND}),
  published AS (${DELETE_PUBLISHED})
SELECT (SELECT count(*) FROM consumed_quotes)::int AS quotes_consumed`;

interface RoundRows {
  newPayments: Row[]; changedPayments: Row[]; entries: Row[]; postings: Row[]; balances: Row[]; newTransfers: Row[]; changedTransfers: Row[];
  consumedQuotes: Row[]; processed: Row[]; accountEvents: Row[]; rounds: Row[];
}

/** The status changes of a round, by transfer or payment id, in order. */
function historyBy(transitions: Array<{ id: string; from: unknown; to: unknown; at: Date }>): Map<string, unknown[]> {
  const history = new Map<string, unknown[]>();
  for (const { id, from, to, at } of transitions) {
    const changes = history.get(id) ?? [];
    changes.push({ from, to, at });
    history.set(id, changes);
  }
  return history;
}

/** The round's rows, keyed by column name; account events must be numbered already. */
function roundRows(batch: BatchWrite): RoundRows {
  const at = batch.now.toISOString();
  const transferHistory = historyBy(batch.transitions.map((t) => ({ id: t.transferId, from: t.from, to: t.to, at: t.at })));
  const paymentHistory = historyBy(batch.paymentTransitions.map((t) => ({ id: t.paymentId, from: t.from, to: t.to, at: t.at })));
  const withHistory = (history: Map<string, unknown[]>) => (record: { id: string }): Row => ({ ...record, status_history: history.get(record.id) ?? [] });
  return {
    newPayments: batch.newPayments.map(withHistory(paymentHistory)),
    changedPayments: batch.changedPayments.map(withHistory(paymentHistory)),
    entries: batch.entries.map((e) => ({ id: e.id, kind: e.kind, command_id: e.commandId, transfer_id: e.transferId, fx_quote_id: e.quoteId, payment_id: e.paymentId, created_at: at })),
    postings: batch.entries.flatMap((e) => e.postings.map((p) => ({
      id: p.id, entry_id: e.id, ledger_account_id: p.ledgerAccountId, account_id: p.ref.accountId,
      currency: p.ref.currency, amount: p.amount.toFixed(), balance_after: p.balanceAfter.toFixed(), transfer_id: e.transferId, created_at: at,
    }))),
    balances: batch.balances.map((b) => ({ id: b.id, balance: b.balance.toFixed() })),
    newTransfers: batch.newTransfers.map(withHistory(transferHistory)),
    changedTransfers: batch.changedTransfers.map(withHistory(transferHistory)),
    consumedQuotes: batch.consumedQuotes.map((q) => ({ id: q.id, consumed_at: q.consumed_at!.toISOString() })),
    // Outcomes are JSON text (outcome.ts): COPY stores the text as it is (processedJson for one statement).
    processed: batch.processed.map((p) => ({
      command_id: p.commandId, type: p.type, outcome: p.outcome, processed_at: at, account_id: p.accountId, idempotency_key: p.idempotencyKey, fingerprint: p.fingerprint,
    })),
    ...outboxRoundRows(batch.roundId, batch.outbox, at),
  };
}

/**
 * A round's outbox: its account events, kept for good in account_events (numbered already), and
 * the round itself until Kafka has it: the messages no other table keeps (entries, partner
 * instructions, operator events) and references to its account events, in order.
 */
export function outboxRoundRows(roundId: string, outbox: OutboxWrite[], at: string): { accountEvents: Row[]; rounds: Row[] } {
  const accountEvents: Row[] = [];
  const messages: Row[] = [];
  const events: Array<[string, number]> = [];
  for (const o of outbox) {
    if (o.accountId !== null) {
      accountEvents.push({ account_id: o.accountId, account_seq: o.accountSeq, id: o.id, payload: o.payload });
      events.push([o.accountId, o.accountSeq!]);
    } else {
      messages.push({ topic: o.topic, key: o.key, payload: o.payload });
    }
  }
  return { accountEvents, rounds: outbox.length > 0 ? [{ round_id: roundId, created_at: at, messages, events }] : [] };
}

/** The processed commands as a JSON array, each outcome's JSON text set in as it is, not parsed and written again. */
function processedJson(batch: BatchWrite): string {
  const at = JSON.stringify(batch.now.toISOString());
  const items = batch.processed.map((p) => `{"command_id":${JSON.stringify(p.commandId)},"type":${JSON.stringify(p.type)},"processed_at":${at},`
    + `"account_id":${JSON.stringify(p.accountId)},"idempotency_key":${JSON.stringify(p.idempotencyKey)},"fingerprint":${JSON.stringify(p.fingerprint)},"outcome":${p.outcome}}`);
  return `[${items.join(',')}]`;
}

/**
 * Writes the round's rows in its transaction and removes the unpublished marks of
 * `publishedRounds`; returns the number of executed quotes found unconsumed.
 */
export async function writeRoundRows(trx: Knex.Transaction, batch: BatchWrite, publishedRounds: string[], oneStatementMax = ONE_STATEMENT_COMMANDS_MAX): Promise<number> {
  const rows = roundRows(batch);
  if (batch.processed.length <= oneStatementMax) {
    const { rows: result } = await trx.raw(ONE_STATEMENT, [
      ...[rows.newPayments, rows.changedPayments, rows.entries, rows.postings, rows.balances, rows.newTransfers, rows.changedTransfers,
        rows.consumedQuotes].map((r) => JSON.stringify(r)),
      processedJson(batch), JSON.stringify(rows.accountEvents), JSON.stringify(rows.rounds),
      publishedRounds,
    ]);
    return result[0].quotes_consumed;
  }
  const json = (r: Row[]) => [JSON.stringify(r)];
  if (rows.newPayments.length > 0) await trx.raw(insertFromJson('payments', PAYMENT_COLUMNS), json(rows.newPayments)); // before the entries that name them
  if (rows.changedPayments.length > 0) await trx.raw(UPDATE_PAYMENTS, json(rows.changedPayments));
  await copyInto(trx, 'journal_entries', ENTRY_COLUMNS, rows.entries);
  // All postings of the round in one statement: the balance trigger checks every entry in it.
  await copyInto(trx, 'postings', POSTING_COLUMNS, rows.postings);
  if (rows.balances.length > 0) await trx.raw(UPDATE_BALANCES, json(rows.balances));
  await copyInto(trx, 'transfers', TRANSFER_COLUMNS, rows.newTransfers);
  if (rows.changedTransfers.length > 0) await trx.raw(UPDATE_TRANSFERS, json(rows.changedTransfers));
  let consumed = 0;
  if (rows.consumedQuotes.length > 0) consumed = (await trx.raw(CONSUME_QUOTES, json(rows.consumedQuotes))).rowCount;
  await copyInto(trx, 'processed_commands', PROCESSED_COLUMNS, rows.processed);
  await copyInto(trx, 'account_events', ACCOUNT_EVENT_COLUMNS, rows.accountEvents);
  if (rows.rounds.length > 0) await trx.raw(INSERT_ROUND, json(rows.rounds));
  if (publishedRounds.length > 0) await trx.raw(DELETE_PUBLISHED, [publishedRounds]);
  return consumed;
}
