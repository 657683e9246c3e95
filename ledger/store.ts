// The one module that reads and writes the ledger's tables. Batches lock in one global order
// (transfers by id, then ledger accounts by code) so concurrent batches never deadlock, and a
// batch writes each table with one statement.
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { AccountFacts } from './decide';
import type { AppliedPosting, LedgerAccountState } from './balances';
import type { LedgerAccountRef } from './chart';
import type { FxQuoteRecord } from './fx-quotes';
import type { PaymentRecord, PaymentStatus } from './payments';
import { Money } from './money';
import type { TransferRecord, TransferStatus } from './transfers';
import { copyInto } from '../src/db/pg-copy';

type Db = Knex | Knex.Transaction;

const FACTS_COLUMNS = `a.id, a.kyb_status,
  EXISTS (SELECT 1 FROM vibans v WHERE v.account_id = a.id) AS has_vibans,
  EXISTS (SELECT 1 FROM chain_wallets w WHERE w.account_id = a.id) AS has_chain_wallet`;

interface FactsRow { id: string; kyb_status: string; has_vibans: boolean; has_chain_wallet: boolean }
const toFacts = (row: FactsRow): AccountFacts => ({ id: row.id, kybStatus: row.kyb_status, hasVibans: row.has_vibans, hasChainWallet: row.has_chain_wallet });

export async function accountFactsById(db: Db, ids: string[]): Promise<Map<string, AccountFacts>> {
  if (ids.length === 0) return new Map();
  const { rows } = await db.raw(`SELECT ${FACTS_COLUMNS} FROM accounts a WHERE a.id = ANY(?::uuid[])`, [ids]);
  return new Map((rows as FactsRow[]).map((r) => [r.id, toFacts(r)]));
}

/** Keyed by lower-cased email. */
export async function accountFactsByEmail(db: Db, emails: string[]): Promise<Map<string, AccountFacts>> {
  if (emails.length === 0) return new Map();
  const { rows } = await db.raw(`SELECT lower(a.email) AS email_key, ${FACTS_COLUMNS} FROM accounts a WHERE lower(a.email) = ANY(?::text[])`, [emails.map((e) => e.toLowerCase())]);
  return new Map((rows as Array<FactsRow & { email_key: string }>).map((r) => [r.email_key, toFacts(r)]));
}

/** Account numbers compare without spaces and case, as banks print them in groups. */
function normaliseAccountNumber(text: string): string {
  return text.replace(/[\s-]+/g, '').toUpperCase();
}

export const bankKey = (accountNumber: string, currency: string): string => `${normaliseAccountNumber(accountNumber)}|${currency}`;

/** Sandbox accounts whose vIBAN matches bank details, keyed by bankKey(account number, currency). */
export async function accountFactsByBank(db: Db, details: Array<{ accountNumber: string; currency: string }>): Promise<Map<string, AccountFacts>> {
  if (details.length === 0) return new Map();
  const numbers = details.map((d) => normaliseAccountNumber(d.accountNumber));
  const { rows } = await db.raw(
    `SELECT v.account_number, v.currency, ${FACTS_COLUMNS} FROM vibans v JOIN accounts a ON a.id = v.account_id WHERE v.account_number = ANY(?::text[])`,
    [numbers],
  );
  return new Map((rows as Array<FactsRow & { account_number: string; currency: string }>).map((r) => [bankKey(r.account_number, r.currency), toFacts(r)]));
}

/**
 * Creates missing ledger accounts in their own short statement, before the batch transaction:
 * inserting inside it could wait on another batch's insert while holding row locks.
 */
export async function ensureLedgerAccounts(db: Knex, refs: LedgerAccountRef[]): Promise<void> {
  const unique = [...new Map(refs.map((r) => [r.code, r])).values()].sort((a, b) => (a.code < b.code ? -1 : 1));
  if (unique.length === 0) return;
  await db('ledger_accounts')
    .insert(unique.map((r) => ({ id: randomUUID(), code: r.code, account_id: r.accountId, kind: r.kind, currency: r.currency })))
    .onConflict('code').ignore();
}

export async function lockLedgerAccounts(trx: Knex.Transaction, refs: LedgerAccountRef[]): Promise<LedgerAccountState[]> {
  const byCode = new Map(refs.map((r) => [r.code, r]));
  const { rows } = await trx.raw(
    'SELECT id, code, balance FROM ledger_accounts WHERE code = ANY(?::text[]) ORDER BY code FOR UPDATE',
    [[...byCode.keys()]],
  );
  return (rows as Array<{ id: string; code: string; balance: string }>).map((r) => ({ id: r.id, ref: byCode.get(r.code)!, balance: new Money(r.balance) }));
}

/**
 * Rows of a ledger-decided table by id; locked (in id order, the same in every batch, so batches
 * never wait on each other in a circle) when the batch decides on them.
 */
async function readById<Row extends { id: string }>(db: Db, table: string, ids: string[], lock: boolean): Promise<Map<string, Row>> {
  if (ids.length === 0) return new Map();
  const query = db(table).whereIn('id', [...new Set(ids)]).orderBy('id');
  if (lock) query.forUpdate();
  const rows: Row[] = await query;
  return new Map(rows.map((r) => [r.id, r]));
}

export const readTransfers = (db: Db, ids: string[], lock: boolean) => readById<TransferRecord>(db, 'transfers', ids, lock);
export const readQuotes = (db: Db, ids: string[], lock: boolean) => readById<FxQuoteRecord>(db, 'fx_quotes', ids, lock);
export const readPayments = (db: Db, ids: string[], lock: boolean) => readById<PaymentRecord>(db, 'payments', ids, lock);

/** The outcomes (their JSON text, outcome.ts) of the commands already decided, by command id. */
export async function processedOutcomes(db: Db, commandIds: string[]): Promise<Map<string, string>> {
  if (commandIds.length === 0) return new Map();
  const { rows } = await db.raw('SELECT command_id, outcome::text AS outcome FROM processed_commands WHERE command_id = ANY(?::text[])', [commandIds]);
  return new Map((rows as Array<{ command_id: string; outcome: string }>).map((r) => [r.command_id, r.outcome]));
}

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
  /** Each decided command with its outcome's JSON text. */
  processed: Array<{ commandId: string; type: string; outcome: string }>;
  outbox: OutboxWrite[];
  /** The round (transaction) the outbox rows belong to, for tracking their publication. */
  roundId: string;
  now: Date;
}

const amountText = (amount: InstanceType<typeof Money>) => amount.toFixed();

const TRANSFER_COLUMNS = [
  'id', 'account_id', 'command_id', 'type', 'status', 'amount', 'currency', 'payout_amount', 'payout_currency', 'fx_rate', 'fx_mid_rate', 'fx_spread', 'recipient_account_id', 'recipient', 'note', 'partner',
  'partner_payment_id', 'failure_code', 'failure_message', 'estimated_arrival', 'created_at', 'updated_at', 'completed_at',
] as const;

/** Writes a decided batch, its outbox rows listed as an unpublished round. Each table is one COPY. */
export async function writeBatch(trx: Knex.Transaction, batch: BatchWrite): Promise<void> {
  const at = batch.now.toISOString();
  await writePayments(trx, batch.newPayments, batch.changedPayments, batch.paymentTransitions); // before the entries that name them
  await copyInto(trx, 'journal_entries', ['id', 'kind', 'command_id', 'transfer_id', 'fx_quote_id', 'payment_id', 'created_at'],
    batch.entries.map((e) => ({ id: e.id, kind: e.kind, command_id: e.commandId, transfer_id: e.transferId, fx_quote_id: e.quoteId, payment_id: e.paymentId, created_at: at })));
  // All postings of the batch in one statement: the balance trigger checks every entry in it.
  await copyInto(trx, 'postings', ['id', 'entry_id', 'ledger_account_id', 'account_id', 'currency', 'amount', 'balance_after', 'transfer_id', 'created_at'],
    batch.entries.flatMap((e) => e.postings.map((p) => ({
      id: p.id, entry_id: e.id, ledger_account_id: p.ledgerAccountId, account_id: p.ref.accountId,
      currency: p.ref.currency, amount: amountText(p.amount), balance_after: amountText(p.balanceAfter),
      transfer_id: e.transferId, created_at: at,
    }))));
  if (batch.balances.length > 0) {
    await trx.raw(
      `UPDATE ledger_accounts AS la SET balance = v.balance::numeric
       FROM unnest(?::uuid[], ?::text[]) AS v(id, balance) WHERE la.id = v.id`,
      [batch.balances.map((b) => b.id), batch.balances.map((b) => amountText(b.balance))],
    );
  }
  const history = new Map<string, Array<{ from: TransferStatus | null; to: TransferStatus; at: Date }>>();
  for (const { transferId, from, to, at: when } of batch.transitions) {
    const transitions = history.get(transferId) ?? [];
    transitions.push({ from, to, at: when });
    history.set(transferId, transitions);
  }
  await copyInto(trx, 'transfers', [...TRANSFER_COLUMNS, 'status_history'],
    batch.newTransfers.map((t) => ({ ...t, status_history: history.get(t.id) ?? [] })));
  for (const t of batch.changedTransfers) {
    await trx('transfers').where('id', t.id).update({
      status: t.status, partner_payment_id: t.partner_payment_id, failure_code: t.failure_code,
      failure_message: t.failure_message, updated_at: t.updated_at, completed_at: t.completed_at,
      status_history: trx.raw('status_history || ?::jsonb', [JSON.stringify(history.get(t.id) ?? [])]),
    });
  }
  if (batch.consumedQuotes.length > 0) {
    const { rowCount } = await trx.raw(
      `UPDATE fx_quotes AS q SET consumed_at = v.at FROM unnest(?::uuid[], ?::timestamptz[]) AS v(id, at) WHERE q.id = v.id AND q.consumed_at IS NULL`,
      [batch.consumedQuotes.map((q) => q.id), batch.consumedQuotes.map((q) => q.consumed_at!.toISOString())],
    );
    // The quotes were locked and found unconsumed: anything else is a bug, and the batch must not commit.
    if (rowCount !== batch.consumedQuotes.length) throw new Error(`${batch.consumedQuotes.length} quotes executed but ${rowCount} consumed`);
  }
  // Outcomes arrive as their JSON text (outcome.ts) and are stored as such.
  await copyInto(trx, 'processed_commands', ['command_id', 'type', 'outcome', 'processed_at'],
    batch.processed.map((p) => ({ command_id: p.commandId, type: p.type, outcome: p.outcome, processed_at: at })));
  if (batch.outbox.length > 0) await writeOutboxRound(trx, batch.roundId, batch.outbox, at);
}

/**
 * Writes a round of messages to the outbox, its account events numbered, and marks it unpublished
 * until Kafka has it (the writer's publisher, or the sweeper). Outside the ledger, the webhook
 * dispatcher announces an endpoint it disabled this way.
 */
/** `at`: an ISO 8601 instant. */
export async function writeOutboxRound(trx: Knex.Transaction, roundId: string, outbox: OutboxWrite[], at: string): Promise<void> {
  await numberAccountEvents(trx, outbox);
  await copyInto(trx, 'outbox', ['id', 'round_id', 'topic', 'message_key', 'account_id', 'account_seq', 'payload', 'created_at'],
    outbox.map((o) => ({ id: o.id, round_id: roundId, topic: o.topic, message_key: o.key, account_id: o.accountId, account_seq: o.accountSeq ?? null, payload: o.payload, created_at: at })));
  await trx('outbox_unpublished_rounds').insert({ round_id: roundId, created_at: at });
}

const PAYMENT_COLUMNS = [
  'id', 'account_id', 'customer_id', 'command_id', 'partner', 'direction', 'kind', 'amount', 'currency', 'status', 'external_id', 'claim_link',
  'idempotency_key', 'retry_count', 'funding_method_external_id', 'payee', 'purpose', 'failure_code', 'failure_message', 'created_at', 'updated_at', 'completed_at',
] as const;

async function writePayments(trx: Knex.Transaction, created: PaymentRecord[], changed: PaymentRecord[], transitions: BatchWrite['paymentTransitions']): Promise<void> {
  const history = new Map<string, Array<{ from: PaymentStatus | null; to: PaymentStatus; at: Date }>>();
  for (const { paymentId, from, to, at } of transitions) history.set(paymentId, [...(history.get(paymentId) ?? []), { from, to, at }]);
  if (created.length > 0) {
    await trx('payments').insert(created.map((p) => ({
      ...Object.fromEntries(PAYMENT_COLUMNS.map((c) => [c, p[c]])), payee: p.payee === null ? null : JSON.stringify(p.payee), status_history: JSON.stringify(history.get(p.id) ?? []),
    })));
  }
  for (const p of changed) {
    await trx('payments').where('id', p.id).update({
      status: p.status, external_id: p.external_id, claim_link: p.claim_link, retry_count: p.retry_count, failure_code: p.failure_code,
      failure_message: p.failure_message, updated_at: p.updated_at, completed_at: p.completed_at,
      status_history: trx.raw('status_history || ?::jsonb', [JSON.stringify(history.get(p.id) ?? [])]),
    });
  }
}

/**
 * Numbers the batch's events of each account after the account's last one, in batch order, and
 * writes the number into the event (`account_seq`). The counter rows are taken in account order,
 * after every ledger-account lock of the transaction, and stay locked until commit: numbers are
 * gapless and follow commit order, and no two transactions wait on each other in a circle.
 */
async function numberAccountEvents(trx: Knex.Transaction, outbox: OutboxWrite[]): Promise<void> {
  const counts = new Map<string, number>();
  for (const row of outbox) if (row.accountId) counts.set(row.accountId, (counts.get(row.accountId) ?? 0) + 1);
  if (counts.size === 0) return;
  const accounts = [...counts.keys()].sort();
  const { rows }: { rows: Array<{ account_id: string; last_seq: string }> } = await trx.raw(
    `INSERT INTO account_event_sequences AS s (account_id, last_seq)
     SELECT * FROM unnest(?::uuid[], ?::bigint[]) ORDER BY 1
     ON CONFLICT (account_id) DO UPDATE SET last_seq = s.last_seq + EXCLUDED.last_seq
     RETURNING account_id, last_seq`,
    [accounts, accounts.map((id) => counts.get(id)!)],
  );
  const next = new Map(rows.map((r) => [r.account_id, Number(r.last_seq) - counts.get(r.account_id)!]));
  for (const row of outbox) {
    if (!row.accountId) continue;
    const seq = next.get(row.accountId)! + 1;
    next.set(row.accountId, seq);
    row.accountSeq = seq;
    (row.payload as { account_seq?: number }).account_seq = seq;
  }
}

/** The round's messages reached Kafka. */
export async function markRoundPublished(db: Db, roundId: string): Promise<void> {
  await db('outbox_unpublished_rounds').where('round_id', roundId).delete();
}

export interface OutboxRow { topic: string; message_key: string; payload: unknown }

/**
 * Claims the oldest round a crashed (or slow) process left unpublished for longer than `ageMs`,
 * with its messages in order; null when there is none. The claim holds until `trx` ends.
 */
export async function claimUnpublishedRound(trx: Knex.Transaction, ageMs: number): Promise<{ roundId: string; rows: OutboxRow[] } | null> {
  const { rows: rounds } = await trx.raw(
    `SELECT round_id FROM outbox_unpublished_rounds WHERE created_at < now() - make_interval(secs => ?)
     ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED`,
    [ageMs / 1000],
  );
  if (rounds.length === 0) return null;
  const roundId: string = rounds[0].round_id;
  const rows: OutboxRow[] = await trx('outbox').where('round_id', roundId).orderBy('seq').select('topic', 'message_key', 'payload');
  return { roundId, rows };
}

