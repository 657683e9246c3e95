// Seeds many settled pay-ins straight into Postgres, for the tests and benchmark that need a
// ledger of 100,000 entries faster than the API can make one: each is a completed openbank
// payment of the account's customer with its balanced `payment_settle` entry (settlement account
// → the account's available balance), numbered and balanced as the ledger writes them, and the
// balances raised by the total. Postgres checks every entry balances, as for the ledger's own.
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Currency } from '../../ledger/money';
import type { Db } from '../../src/db';

export interface SeededPayIns { day: string; count: number; total: string }

/** Amount of the i-th seeded pay-in: distinct cents, 1.00 to 100.99. */
export const seededAmountSql = 'round(((i % 10000) + 100) / 100.0, 2)'; // at the currency's scale, as a payment is made

/** An account as a row, below the API: KYB active, in the sandbox, its email `label`-`id`@example.com. */
export const accountRow = (id: string, label: string) => ({
  id, email: `${label}-${id}@example.com`, password_hash: 'not-a-real-hash', business_name: `${label} Ltd`,
  country_code: 'GB', kyb_status: 'active', environment: 'sandbox',
});

/** Inserts a new account row (see accountRow) and returns its id. */
export async function insertAccount(db: Knex | Knex.Transaction, label: string): Promise<string> {
  const id = randomUUID();
  await db('accounts').insert(accountRow(id, label));
  return id;
}

/** The openbank settlement account of `currency` and `accountId`'s available balance in it, created when missing. */
export async function ensureSettlementAccounts(trx: Knex.Transaction, accountId: string, currency: Currency = 'USD'): Promise<void> {
  await trx.raw(`INSERT INTO ledger_accounts (id, code, account_id, kind, currency) VALUES
    (gen_random_uuid(), ?, NULL, 'system', ?), (gen_random_uuid(), ?, ?, 'available', ?)
    ON CONFLICT (code) DO NOTHING`, [`sys:partner:openbank:${currency}`, currency, `acct:${accountId}:available:${currency}`, accountId, currency]);
}

/**
 * Posts each row of the temporary table `seed` (entry_id, amount, at, i: an inbound amount
 * positive, an outbound one negative; every row in `currency`) between the settlement account and
 * `accountId`'s available balance, numbered in `i` order as the ledger would, and moves both
 * balances by the total.
 */
export async function postSeededEntries(trx: Knex.Transaction, accountId: string, currency: Currency = 'USD'): Promise<void> {
  const available = `acct:${accountId}:available:${currency}`;
  const settlement = `sys:partner:openbank:${currency}`;
  await trx.raw(`
    WITH accounts AS (
      SELECT (SELECT id FROM ledger_accounts WHERE code = ?) AS settlement, (SELECT balance FROM ledger_accounts WHERE code = ?) AS settlement_balance,
             (SELECT id FROM ledger_accounts WHERE code = ?) AS available, (SELECT balance FROM ledger_accounts WHERE code = ?) AS available_balance)
    INSERT INTO postings (id, entry_id, ledger_account_id, account_id, currency, amount, balance_after, created_at)
    SELECT gen_random_uuid(), s.entry_id, leg.ledger_account_id, leg.account_id, ?, leg.amount, leg.balance_after, s.at
      FROM (SELECT *, sum(amount) OVER (ORDER BY i) AS running FROM seed) s CROSS JOIN accounts a
      CROSS JOIN LATERAL (VALUES (a.settlement, NULL::uuid, -s.amount, a.settlement_balance - s.running), (a.available, ?::uuid, s.amount, a.available_balance + s.running))
        AS leg(ledger_account_id, account_id, amount, balance_after)
     ORDER BY s.i`, [settlement, settlement, available, available, currency, accountId]);
  await trx.raw(`UPDATE ledger_accounts SET balance = balance + CASE WHEN kind = 'system' THEN -t.total ELSE t.total END
    FROM (SELECT sum(amount) AS total FROM seed) t WHERE code IN (?, ?)`, [settlement, available]);
}

/**
 * Credits `amount` to `accountId`'s available balance from the faucet's equity, in one balanced
 * entry (a faucet credit, which no partner statement lists); `amount` is positive.
 */
export async function creditFromFaucet(trx: Knex.Transaction, accountId: string, currency: Currency, amount: string): Promise<void> {
  const equity = `sys:faucet:${currency}`;
  const available = `acct:${accountId}:available:${currency}`;
  await trx.raw(`INSERT INTO ledger_accounts (id, code, account_id, kind, currency) VALUES (gen_random_uuid(), ?, NULL, 'system', ?) ON CONFLICT (code) DO NOTHING`, [equity, currency]);
  const entryId = randomUUID();
  await trx.raw(`INSERT INTO journal_entries (id, kind, command_id, created_at) VALUES (?, 'faucet_credit', ?, now())`, [entryId, `seed-credit:${entryId}`]);
  await trx.raw(`INSERT INTO postings (id, entry_id, ledger_account_id, account_id, currency, amount, balance_after, created_at)
    SELECT gen_random_uuid(), ?, la.id, la.account_id, ?, leg.amount, la.balance + leg.amount, now()
      FROM (VALUES (?, -?::numeric), (?, ?::numeric)) AS leg(code, amount) JOIN ledger_accounts la ON la.code = leg.code`,
  [entryId, currency, equity, amount, available, amount]);
  await trx.raw(`UPDATE ledger_accounts SET balance = balance + CASE WHEN code = ? THEN -?::numeric ELSE ?::numeric END WHERE code IN (?, ?)`, [equity, amount, amount, equity, available]);
}

export async function seedSettledPayIns(db: Db, accountId: string, customerId: string, count: number, day: string, tag: string): Promise<SeededPayIns> {
  await db.transaction(async (trx) => {
    await ensureSettlementAccounts(trx, accountId);
    await trx.raw(`CREATE TEMP TABLE seed ON COMMIT DROP AS
      SELECT i, gen_random_uuid() AS payment_id, gen_random_uuid() AS entry_id, ${seededAmountSql}::numeric AS amount,
             ?::date + make_interval(secs => i * 86000.0 / ?) AS at
        FROM generate_series(1, ?) AS i`, [day, count, count]);
    await trx.raw(`INSERT INTO payments (id, account_id, customer_id, command_id, partner, direction, kind, amount, currency, status, external_id, idempotency_key, created_at, updated_at, completed_at)
      SELECT payment_id, ?, ?, 'seed:' || ? || ':' || i, 'openbank', 'inbound', 'add_funds', amount, 'USD', 'completed', 'openbank_seed_' || ? || '_' || i, 'seed-' || i, at, at, at FROM seed`,
    [accountId, customerId, tag, tag]);
    await trx.raw(`INSERT INTO journal_entries (id, kind, command_id, payment_id, created_at) SELECT entry_id, 'payment_settle', 'seed:' || ? || ':' || i, payment_id, at FROM seed`, [tag]);
    await postSeededEntries(trx, accountId);
  });
  const { rows } = await db.raw(`SELECT sum(${seededAmountSql})::numeric(38,2)::text AS total FROM generate_series(1, ?) AS i`, [count]);
  return { day, count, total: rows[0].total };
}

/** The partner statement of the seeded pay-ins as an operator would upload it: one line each, in agreement with the ledger. */
export function seededStatementCsv(count: number, day: string, tag: string): string {
  const lines = ['id,reference,amount,fee,net,currency,value_date'];
  for (let i = 1; i <= count; i += 1) {
    const cents = (i % 10000) + 100;
    const amount = `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;
    lines.push(`stl_${tag}_${i},openbank_seed_${tag}_${i},${amount},0.00,${amount},USD,${day}`);
  }
  return `${lines.join('\n')}\n`;
}

/**
 * The partner's side of the seeded pay-ins: openbank's book (schema mock_rails, book `sandbox`)
 * holds each as a payment of a customer, settled at the moment the ledger settled it, so its
 * daily statement lists them. The day is busy: every 50th pay-in is left off the statement,
 * every 20th of the rest charged a fee, every 10th of the rest settled in the day's batch line.
 */
export async function seedPartnerBook(db: Db, count: number, day: string, tag: string): Promise<void> {
  await db.raw(
    `INSERT INTO mock_rails.payments (book, partner, id, reference, amount, currency, status, created_at, owner_user_id, scenario, settled_at)
     SELECT 'sandbox', 'openbank', 'openbank_seed_' || ? || '_' || i, 'ref_seed_' || ? || '_' || i, ${seededAmountSql}, 'USD', 'completed', at, 2,
            CASE WHEN i % 50 = 0 THEN 'statement_missing' WHEN i % 20 = 0 THEN 'statement_fee' WHEN i % 10 = 3 THEN 'statement_batched' END, at
       FROM (SELECT i, ?::date + make_interval(secs => i * 86000.0 / ?) AS at FROM generate_series(1, ?) AS i) s`,
    [tag, tag, day, count, count],
  );
}
