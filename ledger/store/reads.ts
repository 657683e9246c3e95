// What a round reads of the ledger's tables, after it has locked the records its commands name
// and in the same message (round-transaction.ts gather): what it knows of the commands, the
// accounts' facts, what the faucet credited today. Read once, under the lock, so a decision never
// rests on a record or a fact read before another round changed it. Ledger accounts are made
// here too, ahead of a round and outside its locks.
import type { Knex } from 'knex';
import { randomUUID } from 'node:crypto';
import { faucetEquity, type LedgerAccountRef } from '../chart';
import { bankKey, faucetKey, normaliseAccountNumber, type AccountFacts } from '../commands/facts';
import { canonicalEmail } from '../emails';
import { Money, type Amount, type Currency } from '../money';
import type { CommandRef, FactsRequest, KnownCommand } from '../ports';

const FACTS_COLUMNS = `a.id, a.kyb_status,
  EXISTS (SELECT 1 FROM vibans v WHERE v.account_id = a.id) AS has_vibans,
  EXISTS (SELECT 1 FROM chain_wallets w WHERE w.account_id = a.id) AS has_chain_wallet`;

interface FactsRow { id: string; kyb_status: string; has_vibans: boolean; has_chain_wallet: boolean }
const toFacts = (row: FactsRow): AccountFacts => ({ id: row.id, kybStatus: row.kyb_status, hasVibans: row.has_vibans, hasChainWallet: row.has_chain_wallet });

/**
 * Creates missing ledger accounts in their own short statement, before the round's transaction:
 * inserting inside it could wait on another round's insert while holding row locks.
 */
export async function ensureLedgerAccounts(db: Knex, refs: LedgerAccountRef[]): Promise<void> {
  const unique = [...new Map(refs.map((r) => [r.code, r])).values()].sort((a, b) => (a.code < b.code ? -1 : 1));
  if (unique.length === 0) return;
  await db('ledger_accounts')
    .insert(unique.map((r) => ({ id: randomUUID(), code: r.code, account_id: r.accountId, kind: r.kind, currency: r.currency, wallet_id: r.walletId ?? null })))
    .onConflict('code').ignore();
}

/** A statement of the round's first message ($n placeholders, pg/inline.ts) and how its rows are kept. */
export interface FactsRead { sql: string; params: unknown[]; keep(rows: unknown[], into: ReadFacts): void }

/** What the reads find, before the round makes its facts of them. */
export interface ReadFacts {
  known: Map<string, KnownCommand>;
  byId: Map<string, AccountFacts>;
  byEmail: Map<string, AccountFacts>;
  byBank: Map<string, AccountFacts>;
  clockTimes: Map<string, Date>;
  faucetToday: Map<string, Amount>;
}

/** A command's account id that may be cast to a uuid (an unscreened one is refused, never cast). */
const UUID_PATTERN = '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';

/**
 * In one statement: what was decided before of the round's commands, the time of each command's
 * test clock (where its account lives on one: the round decides that command at the clock's time),
 * and the facts of the accounts its commands name by id or by email.
 */
const COMMANDS_AND_ACCOUNTS = `SELECT c.command_id, p.outcome::text AS outcome, p.fingerprint,
            c.key IS NOT NULL AND EXISTS (
              SELECT 1 FROM idempotency_records r WHERE r.scope = c.account_id AND r.idempotency_key = c.key AND r.expires_at > now()
            ) AS key_held_by_api,
            (SELECT t.frozen_time FROM accounts a JOIN test_clocks t ON t.id = a.test_clock_id
              WHERE a.id = CASE WHEN c.account_id ~* '${UUID_PATTERN}' THEN c.account_id::uuid END) AS clock_time,
            NULL::text AS email_key, NULL::uuid AS id, NULL::text AS kyb_status, NULL::boolean AS has_vibans, NULL::boolean AS has_chain_wallet
       FROM unnest($1::text[], $2::text[], $3::text[]) AS c(command_id, account_id, key)
       LEFT JOIN processed_commands p ON p.command_id = c.command_id
     UNION ALL
     SELECT NULL, NULL, NULL, NULL, NULL, lower(a.email), ${FACTS_COLUMNS}
       FROM accounts a WHERE a.id = ANY($4::uuid[]) OR lower(a.email) = ANY($5::text[])`;

function commandsAndAccounts(commands: CommandRef[], ids: string[], emails: string[]): FactsRead {
  const wantedEmails = emails.map(canonicalEmail);
  const commandsById = new Map(commands.map((c) => [c.id, c]));
  const idSet = new Set(ids);
  const emailSet = new Set(wantedEmails);
  type Row = FactsRow & { command_id: string | null; outcome: string | null; fingerprint: string | null; key_held_by_api: boolean | null; clock_time: Date | null; email_key: string | null };
  return {
    sql: COMMANDS_AND_ACCOUNTS,
    params: [commands.map((c) => c.id), commands.map((c) => c.accountId), commands.map((c) => c.idempotencyKey), ids, wantedEmails],
    keep(rows, into) {
      for (const row of rows as Row[]) {
        if (row.command_id !== null) {
          into.known.set(row.command_id, {
            decided: row.outcome === null ? null : { outcome: row.outcome, fingerprint: row.fingerprint }, keyHeldByApi: row.key_held_by_api === true,
          });
          const ref = commandsById.get(row.command_id);
          if (row.clock_time !== null && ref) into.clockTimes.set(ref.accountId, new Date(row.clock_time));
          continue;
        }
        if (idSet.has(row.id)) into.byId.set(row.id, toFacts(row));
        if (emailSet.has(row.email_key!)) into.byEmail.set(row.email_key!, toFacts(row));
      }
    },
  };
}

/** Sandbox accounts whose vIBAN matches bank details, keyed by bankKey(account number, currency). */
function accountsByBank(details: FactsRequest['banks']): FactsRead {
  return {
    sql: `SELECT v.account_number, v.currency, ${FACTS_COLUMNS} FROM vibans v JOIN accounts a ON a.id = v.account_id WHERE v.account_number = ANY($1::text[])`,
    params: [details.map((d) => normaliseAccountNumber(d.accountNumber))],
    keep(rows, into) {
      for (const r of rows as Array<FactsRow & { account_number: string; currency: string }>) into.byBank.set(bankKey(r.account_number, r.currency), toFacts(r));
    },
  };
}

/**
 * What the faucet credited each account in each currency this UTC day (the database's clock,
 * the ledger's), by faucetKey: the daily bound of decideFaucetCredit counts it. From the faucet's
 * equity accounts, by time (postings_system_account_created), to the credited postings of the
 * same entries: an account's own postings are indexed by sequence only, and a busy account has many.
 */
function faucetCreditedToday(wanted: FactsRequest['faucets']): FactsRead {
  return {
    sql: `SELECT c.account_id, c.currency, sum(c.amount)::text AS total
       FROM ledger_accounts la
       JOIN postings e ON e.ledger_account_id = la.id AND e.account_id IS NULL
                      AND e.created_at >= date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
       JOIN postings c ON c.entry_id = e.entry_id AND c.account_id IS NOT NULL
      WHERE la.code = ANY($1::text[]) AND (c.account_id, c.currency) IN (SELECT * FROM unnest($2::uuid[], $3::text[]))
      GROUP BY c.account_id, c.currency`,
    params: [[...new Set(wanted.map((w) => faucetEquity(w.currency as Currency).code))], wanted.map((w) => w.accountId), wanted.map((w) => w.currency)],
    keep(rows, into) {
      for (const row of rows as Array<{ account_id: string; currency: string; total: string }>) into.faucetToday.set(faucetKey(row.account_id, row.currency), new Money(row.total));
    },
  };
}

/** The reads a round's first message makes after its locks: only those its commands need. */
export function factsReads(request: FactsRequest): FactsRead[] {
  const reads = [commandsAndAccounts(request.commands, request.senders, request.emails)];
  if (request.banks.length > 0) reads.push(accountsByBank(request.banks));
  if (request.faucets.length > 0) reads.push(faucetCreditedToday(request.faucets));
  return reads;
}

export const noFacts = (): ReadFacts => ({ known: new Map(), byId: new Map(), byEmail: new Map(), byBank: new Map(), clockTimes: new Map(), faucetToday: new Map() });
