// Writes a decided round's rows. A large round goes table by table with COPY, which Postgres
// parses fastest for thousands of rows but which costs two round trips a table. At light load a
// round holds a command or two, and round trips were most of the ledger's work per transfer: a
// small round is written instead by one statement, every table a data-modifying CTE fed by a JSON
// parameter, its account events numbered inside it, prepared once per connection
// (round-transaction.ts). Its rows are checked as COPY's are: the postings trigger sees all
// of them at the end of the statement, and foreign keys are checked then too, so the order of the
// CTEs does not matter. Updates are one statement per table either way.
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { copyIntoClient } from '../pg/copy';
import type { BatchWrite, OutboxWrite } from '../ports';
import type { LateCompletionException } from '../transfers';

/** A round of at most this many commands is written by one statement. */
export const ONE_STATEMENT_COMMANDS_MAX = 64;

const TRANSFER_COLUMNS = [
  'id', 'account_id', 'from_wallet_id', 'command_id', 'type', 'status', 'amount', 'currency', 'payout_amount', 'payout_currency', 'fx_rate', 'fx_mid_rate', 'fx_spread', 'recipient_account_id', 'recipient', 'note', 'partner',
  'partner_payment_id', 'failure_code', 'failure_message', 'estimated_arrival', 'created_at', 'updated_at', 'completed_at', 'status_history', 'late_completion', 'metadata',
] as const;
const PAYMENT_COLUMNS = [
  'id', 'account_id', 'customer_id', 'command_id', 'partner', 'direction', 'kind', 'amount', 'currency', 'status', 'external_id', 'claim_link',
  'idempotency_key', 'retry_count', 'submissions', 'funding_method_external_id', 'payee', 'purpose', 'failure_code', 'failure_message', 'created_at', 'updated_at', 'completed_at', 'status_history',
  'metadata',
] as const;
const ENTRY_COLUMNS = ['id', 'kind', 'command_id', 'transfer_id', 'fx_quote_id', 'payment_id', 'created_at'] as const;
const POSTING_COLUMNS = ['id', 'entry_id', 'ledger_account_id', 'account_id', 'currency', 'amount', 'balance_after', 'transfer_id', 'created_at'] as const;
const PROCESSED_COLUMNS = ['command_id', 'type', 'outcome', 'processed_at', 'account_id', 'idempotency_key', 'fingerprint'] as const;
const EXCEPTION_COLUMNS = [
  'id', 'partner', 'category', 'transfer_id', 'ledger_entry_id', 'reference', 'currency', 'reheld_amount', 'receivable_amount',
  'reason', 'amount_tolerance', 'status', 'created_at',
] as const;
const HOLD_COLUMNS = [
  'id', 'account_id', 'wallet_id', 'command_id', 'status', 'currency', 'amount', 'captured_amount', 'released_amount', 'description', 'captures', 'expires_at', 'created_at', 'updated_at',
  'metadata',
] as const;
export const ACCOUNT_EVENT_COLUMNS = ['account_id', 'account_seq', 'id', 'payload'] as const;

type Row = Record<string, unknown>;

/** Inserts the rows of a JSON array parameter into a table, by column name. */
const insertFromJson = (table: string, columns: readonly string[], param: string) =>
  `INSERT INTO ${table} (${columns.join(', ')}) SELECT ${columns.join(', ')} FROM jsonb_populate_recordset(NULL::${table}, ${param}::jsonb)`;

// Each update takes a JSON array of rows with the table's column names; status histories append.
// A payment whose partner id arrives (its request's submission is done) is due for the settler at
// once: one the settler saw before, still without it, was left to the request until
// PAYMENT_RESUBMIT_AFTER_MS (consumers/partners/settler.ts).
const updatePayments = (param: string) => `UPDATE payments AS p SET status = v.status, external_id = v.external_id, claim_link = v.claim_link, retry_count = v.retry_count, submissions = v.submissions,
    failure_code = v.failure_code, failure_message = v.failure_message, updated_at = v.updated_at, completed_at = v.completed_at,
    status_history = p.status_history || v.status_history,
    next_poll_at = CASE WHEN p.external_id IS NULL AND v.external_id IS NOT NULL THEN least(p.next_poll_at, now()) ELSE p.next_poll_at END
  FROM jsonb_populate_recordset(NULL::payments, ${param}::jsonb) AS v WHERE p.id = v.id`;
const updateTransfers = (param: string) => `UPDATE transfers AS t SET status = v.status, partner_payment_id = v.partner_payment_id, failure_code = v.failure_code,
    failure_message = v.failure_message, updated_at = v.updated_at, completed_at = v.completed_at, late_completion = v.late_completion,
    status_history = t.status_history || v.status_history,
    reversed_amount = coalesce(v.reversed_amount, t.reversed_amount), reversals = coalesce(v.reversals, t.reversals), metadata = coalesce(v.metadata, t.metadata)
  FROM jsonb_populate_recordset(NULL::transfers, ${param}::jsonb) AS v WHERE t.id = v.id`;
// A changed hold is written as its decision left it, its amount included (what a hold holds may
// change); the holds' check keeps captured + released within the amount written.
const updateHolds = (param: string) => `UPDATE holds AS h SET status = v.status, amount = v.amount, captured_amount = v.captured_amount, released_amount = v.released_amount,
    captures = v.captures, updated_at = v.updated_at, metadata = coalesce(v.metadata, h.metadata)
  FROM jsonb_populate_recordset(NULL::holds, ${param}::jsonb) AS v WHERE h.id = v.id`;
const updateBalances = (param: string) => `UPDATE ledger_accounts AS la SET balance = v.balance FROM jsonb_populate_recordset(NULL::ledger_accounts, ${param}::jsonb) AS v WHERE la.id = v.id`;
// Executed quotes were locked and found unconsumed: the count returned must be theirs.
const consumeQuotes = (param: string) => `UPDATE fx_quotes AS q SET consumed_at = v.consumed_at FROM jsonb_populate_recordset(NULL::fx_quotes, ${param}::jsonb) AS v WHERE q.id = v.id AND q.consumed_at IS NULL RETURNING 1`;
// A round's created_at is the database's clock (the column's default), never the round's own
// instant: the sweeper ages rounds by the database's clock, and a round decided at a test clock's
// time (years ahead) or by a process whose clock is off would never look old enough to sweep.
export const INSERT_ROUND = 'INSERT INTO outbox_rounds (round_id, messages, events) SELECT round_id, messages, events FROM jsonb_populate_recordset(NULL::outbox_rounds, $1::jsonb)';
// A late completion opens its exception in the reconciliation exceptions queue in the very
// transaction that completes the transfer, rather than through an event a finance consumer would
// read: no process runs such a consumer, and a row written here cannot be lost or lag behind the
// money it reports. The ledger decides each command once (processed_commands), so a redelivery
// opens nothing; the unique index on the transfer makes it once in any case.
const openLateCompletions = (param: string) => `${insertFromJson('reconciliation_exceptions', EXCEPTION_COLUMNS, param)} ON CONFLICT DO NOTHING`;
const deletePublished = (param: string) => `DELETE FROM outbox_rounds WHERE round_id = ANY(${param}::uuid[])`;

/**
 * Numbers the round's account events after each account's last one, in round order, from the
 * counter rows: taken in account order, after every ledger-account lock of the transaction, and
 * held until commit, so numbers are gapless and follow commit order, and no two transactions wait
 * on each other in a circle. Returns each event's id with its number.
 */
const NUMBERED_EVENTS = `
  event_input AS (SELECT * FROM jsonb_to_recordset($10::jsonb) AS e(ord int, account_id uuid, id uuid, payload jsonb)),
  event_counts AS (SELECT account_id, count(*) AS n FROM event_input GROUP BY account_id),
  event_seqs AS (
    INSERT INTO account_event_sequences AS s (account_id, last_seq) SELECT account_id, n FROM event_counts ORDER BY account_id
    ON CONFLICT (account_id) DO UPDATE SET last_seq = s.last_seq + EXCLUDED.last_seq
    RETURNING account_id, last_seq),
  numbered AS (
    SELECT e.ord, e.account_id, e.id, e.payload, s.last_seq - c.n + row_number() OVER (PARTITION BY e.account_id ORDER BY e.ord) AS account_seq
      FROM event_input e JOIN event_seqs s USING (account_id) JOIN event_counts c USING (account_id)),
  events AS (
    INSERT INTO account_events (account_id, account_seq, id, payload)
    SELECT account_id, account_seq, id, jsonb_set(payload, '{account_seq}', to_jsonb(account_seq)) FROM numbered),
  round AS (
    INSERT INTO outbox_rounds (round_id, messages, events)
    SELECT r.round_id, r.messages, coalesce((SELECT jsonb_agg(jsonb_build_array(account_id, account_seq) ORDER BY ord) FROM numbered), '[]')
      FROM jsonb_to_recordset($11::jsonb) AS r(round_id uuid, messages jsonb))`;

const ONE_STATEMENT = `WITH
  new_payments AS (${insertFromJson('payments', PAYMENT_COLUMNS, '$1')}),
  changed_payments AS (${updatePayments('$2')}),
  entries AS (${insertFromJson('journal_entries', ENTRY_COLUMNS, '$3')}),
  postings AS (${insertFromJson('postings', POSTING_COLUMNS, '$4')}),
  balances AS (${updateBalances('$5')}),
  new_transfers AS (${insertFromJson('transfers', TRANSFER_COLUMNS, '$6')}),
  changed_transfers AS (${updateTransfers('$7')}),
  consumed_quotes AS (${consumeQuotes('$8')}),
  processed AS (${insertFromJson('processed_commands', PROCESSED_COLUMNS, '$9')}),${NUMBERED_EVENTS},
  published AS (${deletePublished('$12')}),
  late_completions AS (${openLateCompletions('$14')}),
  new_holds AS (${insertFromJson('holds', HOLD_COLUMNS, '$15')}),
  changed_holds AS (${updateHolds('$16')})
SELECT ledger_assert((SELECT count(*) FROM consumed_quotes) = $13, 'an executed quote was consumed already') AS quotes_checked,
       (SELECT coalesce(json_agg(json_build_array(id, account_seq)), '[]') FROM numbered) AS event_seqs`;

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

/** The round's rows other than its outbox, keyed by column name. */
function roundRows(batch: BatchWrite) {
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
    lateCompletions: batch.lateCompletions.map((late) => lateCompletionRow(late, at)),
    newHolds: (batch.newHolds ?? []) as unknown as Row[],
    changedHolds: (batch.changedHolds ?? []) as unknown as Row[],
  };
}

/** A late completion's exception as finance's queue keeps it: open, of no report, naming the transfer and both amounts. */
function lateCompletionRow(late: LateCompletionException, at: string): Row {
  const { overturned } = late;
  return {
    id: randomUUID(), partner: late.partner, category: 'late_completion', transfer_id: late.transferId, ledger_entry_id: late.entryId,
    reference: late.partnerPaymentId, currency: late.currency, reheld_amount: late.reheld, receivable_amount: late.receivable,
    reason: `the partner paid transfer ${late.transferId} (${late.amount} ${late.currency}) after the ledger had failed it `
      + `(${overturned.failure_code ?? 'no code'} at ${overturned.failed_at}): completed late, ${late.reheld} held again from the sender's available balance `
      + `and ${late.receivable} owed through sys:receivable:late_completion:${late.currency}`,
    amount_tolerance: '0', status: 'open', created_at: at,
  };
}

/** The messages of a round that no other table keeps: its entries, partner instructions and operator events. */
const unkeptMessages = (outbox: OutboxWrite[]): Row[] => outbox.filter((o) => o.accountId === null).map((o) => ({ topic: o.topic, key: o.key, payload: o.payload }));

/**
 * A round's outbox once its account events are numbered: the events, kept for good in
 * account_events, and the round itself until Kafka has it, with the messages no other table keeps
 * and references to its account events, in order.
 */
export function outboxRoundRows(roundId: string, outbox: OutboxWrite[]): { accountEvents: Row[]; rounds: Row[] } {
  const events = outbox.filter((o) => o.accountId !== null);
  return {
    accountEvents: events.map((o) => ({ account_id: o.accountId, account_seq: o.accountSeq, id: o.id, payload: o.payload })),
    rounds: outbox.length > 0 ? [{ round_id: roundId, messages: unkeptMessages(outbox), events: events.map((o) => [o.accountId, o.accountSeq]) }] : [],
  };
}

/** The processed commands as a JSON array, each outcome's JSON text set in as it is, not parsed and written again. */
function processedJson(batch: BatchWrite): string {
  const at = JSON.stringify(batch.now.toISOString());
  const items = batch.processed.map((p) => `{"command_id":${JSON.stringify(p.commandId)},"type":${JSON.stringify(p.type)},"processed_at":${at},`
    + `"account_id":${JSON.stringify(p.accountId)},"idempotency_key":${JSON.stringify(p.idempotencyKey)},"fingerprint":${JSON.stringify(p.fingerprint)},"outcome":${p.outcome}}`);
  return `[${items.join(',')}]`;
}

/** Sets an account event's number on it and in its payload, as Kafka and the event streams carry it. */
function setSeq(event: OutboxWrite, seq: number): void {
  event.accountSeq = seq;
  (event.payload as { account_seq?: number }).account_seq = seq;
}

/**
 * The one statement that writes a small round ($1..$16), and what to do with its result. The
 * quotes executed must all be found unconsumed (they were locked and read so): else the statement
 * fails, and the round is not committed.
 */
export function oneStatementRound(batch: BatchWrite, publishedRounds: string[]): { text: string; params: unknown[]; done: (row: Row) => void } {
  const rows = roundRows(batch);
  const events = batch.outbox.flatMap((o, ord) => (o.accountId === null ? [] : [{ ord, account_id: o.accountId, id: o.id, payload: o.payload }]));
  const round = batch.outbox.length > 0 ? [{ round_id: batch.roundId, messages: unkeptMessages(batch.outbox) }] : [];
  const params = [
    ...[rows.newPayments, rows.changedPayments, rows.entries, rows.postings, rows.balances, rows.newTransfers, rows.changedTransfers, rows.consumedQuotes].map((r) => JSON.stringify(r)),
    processedJson(batch), JSON.stringify(events), JSON.stringify(round), publishedRounds, batch.consumedQuotes.length, JSON.stringify(rows.lateCompletions),
    JSON.stringify(rows.newHolds), JSON.stringify(rows.changedHolds),
  ];
  const done = (row: Row) => {
    const seqs = new Map((row.event_seqs as Array<[string, number | string]>).map(([id, seq]) => [id, Number(seq)]));
    for (const event of batch.outbox) if (event.accountId !== null) setSeq(event, seqs.get(event.id)!);
  };
  return { text: ONE_STATEMENT, params, done };
}

/**
 * Writes a large round on `client`, in its transaction: events numbered, then table by table with
 * COPY, and removes the unpublished marks of `publishedRounds`. Returns the number of executed
 * quotes found unconsumed.
 */
export async function writeLargeRound(client: pg.ClientBase, batch: BatchWrite, publishedRounds: string[]): Promise<number> {
  await numberAccountEvents(client, batch.outbox);
  const rows = roundRows(batch);
  const { accountEvents, rounds } = outboxRoundRows(batch.roundId, batch.outbox);
  const json = (r: Row[]) => [JSON.stringify(r)];
  if (rows.newPayments.length > 0) await client.query(insertFromJson('payments', PAYMENT_COLUMNS, '$1'), json(rows.newPayments)); // before the entries that name them
  if (rows.changedPayments.length > 0) await client.query(updatePayments('$1'), json(rows.changedPayments));
  await copyIntoClient(client, 'journal_entries', ENTRY_COLUMNS, rows.entries);
  // All postings of the round in one statement: the balance trigger checks every entry in it.
  await copyIntoClient(client, 'postings', POSTING_COLUMNS, rows.postings);
  if (rows.balances.length > 0) await client.query(updateBalances('$1'), json(rows.balances));
  await copyIntoClient(client, 'transfers', TRANSFER_COLUMNS, rows.newTransfers);
  if (rows.changedTransfers.length > 0) await client.query(updateTransfers('$1'), json(rows.changedTransfers));
  const consumed = rows.consumedQuotes.length > 0 ? (await client.query(consumeQuotes('$1'), json(rows.consumedQuotes))).rowCount ?? 0 : 0;
  await copyIntoClient(client, 'processed_commands', PROCESSED_COLUMNS, rows.processed);
  await copyIntoClient(client, 'account_events', ACCOUNT_EVENT_COLUMNS, accountEvents);
  if (rounds.length > 0) await client.query(INSERT_ROUND, json(rounds));
  if (rows.lateCompletions.length > 0) await client.query(openLateCompletions('$1'), json(rows.lateCompletions));
  if (rows.newHolds.length > 0) await client.query(insertFromJson('holds', HOLD_COLUMNS, '$1'), json(rows.newHolds));
  if (rows.changedHolds.length > 0) await client.query(updateHolds('$1'), json(rows.changedHolds));
  if (publishedRounds.length > 0) await client.query(deletePublished('$1'), [publishedRounds]);
  return consumed;
}

/**
 * Numbers the account events of `outbox` after each account's last one, in order, and writes the
 * number into each event (`account_seq`): the same rule as the one statement's numbering, for
 * rounds written otherwise (a large round, an event announced outside the ledger).
 */
export async function numberAccountEvents(client: pg.ClientBase, outbox: OutboxWrite[]): Promise<void> {
  const counts = new Map<string, number>();
  for (const row of outbox) if (row.accountId) counts.set(row.accountId, (counts.get(row.accountId) ?? 0) + 1);
  if (counts.size === 0) return;
  const accounts = [...counts.keys()].sort();
  const { rows }: { rows: Array<{ account_id: string; last_seq: string }> } = await client.query(
    `INSERT INTO account_event_sequences AS s (account_id, last_seq)
     SELECT * FROM unnest($1::uuid[], $2::bigint[]) ORDER BY 1
     ON CONFLICT (account_id) DO UPDATE SET last_seq = s.last_seq + EXCLUDED.last_seq
     RETURNING account_id, last_seq`,
    [accounts, accounts.map((id) => counts.get(id)!)],
  );
  const next = new Map(rows.map((r) => [r.account_id, Number(r.last_seq) - counts.get(r.account_id)!]));
  for (const row of outbox) {
    if (!row.accountId) continue;
    const seq = next.get(row.accountId)! + 1;
    next.set(row.accountId, seq);
    setSeq(row, seq);
  }
}
