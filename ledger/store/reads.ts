// Reads the ledger's tables for a round (what it knows of the commands, the accounts' facts, the
// records they name), creates missing ledger accounts, and keeps the outbox rounds. A round locks
// and writes in its own transaction (round-transaction.ts).
import type { Knex } from 'knex';
import { randomUUID } from 'node:crypto';
import { faucetEquity, type LedgerAccountRef } from '../chart';
import type { AccountFacts } from '../decide';
import { canonicalEmail } from '../emails';
import type { FxQuoteRecord } from '../fx-quotes';
import type { HoldRecord } from '../holds';
import { Money, type Amount, type Currency } from '../money';
import type { PaymentRecord } from '../payments';
import { isCanonicalUuid } from '../screen';
import type { TransferRecord } from '../transfers';
import type { WalletRecord } from '../wallets';

type Db = Knex | Knex.Transaction;

const FACTS_COLUMNS = `a.id, a.kyb_status,
  EXISTS (SELECT 1 FROM vibans v WHERE v.account_id = a.id) AS has_vibans,
  EXISTS (SELECT 1 FROM chain_wallets w WHERE w.account_id = a.id) AS has_chain_wallet`;

interface FactsRow { id: string; kyb_status: string; has_vibans: boolean; has_chain_wallet: boolean }
const toFacts = (row: FactsRow): AccountFacts => ({ id: row.id, kybStatus: row.kyb_status, hasVibans: row.has_vibans, hasChainWallet: row.has_chain_wallet });

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
    .insert(unique.map((r) => ({ id: randomUUID(), code: r.code, account_id: r.accountId, kind: r.kind, currency: r.currency, wallet_id: r.walletId ?? null })))
    .onConflict('code').ignore();
}

/** Rows of a ledger-decided table by id, as they are before a round locks them. */
async function readById<Row extends { id: string }>(db: Db, table: string, ids: string[]): Promise<Map<string, Row>> {
  if (ids.length === 0) return new Map();
  const rows: Row[] = await db(table).whereIn('id', [...new Set(ids)]);
  return new Map(rows.map((r) => [r.id, r]));
}

export const readTransfers = (db: Db, ids: string[]) => readById<TransferRecord>(db, 'transfers', ids);
export const readQuotes = (db: Db, ids: string[]) => readById<FxQuoteRecord>(db, 'fx_quotes', ids);
export const readPayments = (db: Db, ids: string[]) => readById<PaymentRecord>(db, 'payments', ids);
export const readHolds = (db: Db, ids: string[]) => readById<HoldRecord>(db, 'holds', ids);
/** Wallets by id; an id that is not a UUID ("main", or a typo) names none. */
export const readWallets = (db: Db, ids: string[]) => readById<WalletRecord>(db, 'wallets', ids.filter(isCanonicalUuid));

/** The key of an account and currency in faucetCreditedToday's answer. */
export const faucetKey = (accountId: string, currency: string): string => `${accountId}:${currency}`;

/**
 * What the faucet credited each account in each currency this UTC day (the database's clock,
 * the ledger's), by faucetKey: the daily bound of decideFaucetCredit counts it.
 */
export async function faucetCreditedToday(db: Db, wanted: Array<{ accountId: string; currency: string }>): Promise<Map<string, Amount>> {
  const credited = new Map<string, Amount>();
  if (wanted.length === 0) return credited;
  // From the faucet's equity accounts, by time (postings_system_account_created), to the credited
  // postings of the same entries: an account's own postings are indexed by sequence only, and a
  // busy account has many.
  const { rows } = await db.raw(
    `SELECT c.account_id, c.currency, sum(c.amount)::text AS total
       FROM ledger_accounts la
       JOIN postings e ON e.ledger_account_id = la.id AND e.account_id IS NULL
                      AND e.created_at >= date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
       JOIN postings c ON c.entry_id = e.entry_id AND c.account_id IS NOT NULL
      WHERE la.code = ANY(?::text[]) AND (c.account_id, c.currency) IN (SELECT * FROM unnest(?::uuid[], ?::text[]))
      GROUP BY c.account_id, c.currency`,
    [[...new Set(wanted.map((w) => faucetEquity(w.currency as Currency).code))], wanted.map((w) => w.accountId), wanted.map((w) => w.currency)],
  );
  for (const row of rows as Array<{ account_id: string; currency: string; total: string }>) credited.set(faucetKey(row.account_id, row.currency), new Money(row.total));
  return credited;
}

/** What the ledger already knows of a command it is handed. */
export interface KnownCommand {
  /** The outcome (its JSON text, outcome.ts) and the request fingerprint of a command decided before. */
  decided: { outcome: string; fingerprint: string | null } | null;
  /** The command's Idempotency-Key is held by a request of a route the API keeps the record of (DESIGN.md section 5). */
  keyHeldByApi: boolean;
}

export interface CommandRef { id: string; accountId: string; idempotencyKey: string | null }

export interface RoundFacts {
  /** For each command: whether it was decided before, and whether another route's request holds its key. */
  known: Map<string, KnownCommand>;
  /** The accounts named by id, and those named by email (keyed by canonicalEmail). */
  byId: Map<string, AccountFacts>;
  byEmail: Map<string, AccountFacts>;
  /** The time of each command's account that lives on a test clock (DESIGN.md section 5i), by account id. */
  clockTimes: Map<string, Date>;
}

/** A command's account id that may be cast to a uuid (an unscreened one is refused, never cast). */
const UUID_PATTERN = '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';

/**
 * What a round needs to know before it locks anything, in one statement: what was decided
 * before of its commands, the time of each command's test clock (where its account lives on one:
 * the round decides that command at the clock's time), and the facts of the accounts its commands
 * name by id or by email.
 */
export async function roundFacts(db: Db, commands: CommandRef[], ids: string[], emails: string[]): Promise<RoundFacts> {
  const facts: RoundFacts = { known: new Map(), byId: new Map(), byEmail: new Map(), clockTimes: new Map() };
  if (commands.length === 0 && ids.length === 0 && emails.length === 0) return facts;
  const wantedEmails = emails.map(canonicalEmail);
  const { rows } = await db.raw(
    `SELECT c.command_id, p.outcome::text AS outcome, p.fingerprint,
            c.key IS NOT NULL AND EXISTS (
              SELECT 1 FROM idempotency_records r WHERE r.scope = c.account_id AND r.idempotency_key = c.key AND r.expires_at > now()
            ) AS key_held_by_api,
            (SELECT t.frozen_time FROM accounts a JOIN test_clocks t ON t.id = a.test_clock_id
              WHERE a.id = CASE WHEN c.account_id ~* '${UUID_PATTERN}' THEN c.account_id::uuid END) AS clock_time,
            NULL::text AS email_key, NULL::uuid AS id, NULL::text AS kyb_status, NULL::boolean AS has_vibans, NULL::boolean AS has_chain_wallet
       FROM unnest(?::text[], ?::text[], ?::text[]) AS c(command_id, account_id, key)
       LEFT JOIN processed_commands p ON p.command_id = c.command_id
     UNION ALL
     SELECT NULL, NULL, NULL, NULL, NULL, lower(a.email), ${FACTS_COLUMNS}
       FROM accounts a WHERE a.id = ANY(?::uuid[]) OR lower(a.email) = ANY(?::text[])`,
    [commands.map((c) => c.id), commands.map((c) => c.accountId), commands.map((c) => c.idempotencyKey) as string[], ids, wantedEmails],
  );
  const commandsById = new Map(commands.map((c) => [c.id, c]));
  const idSet = new Set(ids);
  const emailSet = new Set(wantedEmails);
  type Row = FactsRow & { command_id: string | null; outcome: string | null; fingerprint: string | null; key_held_by_api: boolean | null; clock_time: Date | null; email_key: string | null };
  for (const row of rows as Row[]) {
    if (row.command_id !== null) {
      facts.known.set(row.command_id, {
        decided: row.outcome === null ? null : { outcome: row.outcome, fingerprint: row.fingerprint }, keyHeldByApi: row.key_held_by_api === true,
      });
      const ref = commandsById.get(row.command_id);
      if (row.clock_time !== null && ref) facts.clockTimes.set(ref.accountId, new Date(row.clock_time));
      continue;
    }
    if (idSet.has(row.id)) facts.byId.set(row.id, toFacts(row));
    if (emailSet.has(row.email_key!)) facts.byEmail.set(row.email_key!, toFacts(row));
  }
  return facts;
}

