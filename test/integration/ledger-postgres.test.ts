// Postgres itself enforces the ledger (DESIGN.md section 4; migrations/20261122110000_ledger.ts),
// whatever the code above it does: entries balance per currency, an entry has postings, postings
// and entries are append-only, and a customer balance never goes below zero. Every case runs in
// a transaction that is rolled back (or refused at commit), so nothing here is left behind.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { available, pending, type LedgerAccountRef } from '../../ledger/chart';
import { copyInto } from '../../ledger/pg/copy';
import { db } from '../hooks';
import { insertAccount } from '../support/seed-ledger';
import { rolledBack as rolledBackIn } from '../support/database';


const rolledBack = <T>(work: (trx: Knex.Transaction) => Promise<T>): Promise<T> => rolledBackIn(db(), work);

async function insertLedgerAccount(trx: Knex.Transaction, ref: LedgerAccountRef, balance = '0'): Promise<string> {
  const id = randomUUID();
  await trx('ledger_accounts').insert({ id, code: ref.code, account_id: ref.accountId, kind: ref.kind, currency: ref.currency, balance });
  return id;
}

interface Seeded {
  a: string;
  b: string;
  aUsd: string;
  bUsd: string;
  aEur: string;
  bEur: string;
}

/** Two accounts, each with an available USD and EUR ledger account. */
async function seed(trx: Knex.Transaction): Promise<Seeded> {
  const a = await insertAccount(trx, 'ledger-pg');
  const b = await insertAccount(trx, 'ledger-pg');
  return {
    a, b,
    aUsd: await insertLedgerAccount(trx, available(a, 'USD')),
    bUsd: await insertLedgerAccount(trx, available(b, 'USD')),
    aEur: await insertLedgerAccount(trx, available(a, 'EUR')),
    bEur: await insertLedgerAccount(trx, available(b, 'EUR')),
  };
}

async function insertEntry(trx: Knex.Transaction): Promise<string> {
  const id = randomUUID();
  await trx('journal_entries').insert({ id, kind: 'internal_transfer', command_id: `test:${id}`, transfer_id: null });
  return id;
}

function posting(entryId: string, ledgerAccountId: string, accountId: string | null, currency: string, amount: string) {
  return { id: randomUUID(), entry_id: entryId, ledger_account_id: ledgerAccountId, account_id: accountId, currency, amount, balance_after: amount };
}

/** A balanced USD entry: 5.00 from a to b. */
async function balancedEntry(trx: Knex.Transaction, s: Seeded): Promise<string> {
  const entryId = await insertEntry(trx);
  await trx('postings').insert([posting(entryId, s.aUsd, s.a, 'USD', '-5.00'), posting(entryId, s.bUsd, s.b, 'USD', '5.00')]);
  return entryId;
}

const CHECK_VIOLATION = '23514';
const APPEND_ONLY = '42501'; // insufficient_privilege, raised by ledger_is_append_only()

describe('ledger in Postgres: balanced entries are accepted', () => {
  it('a balanced entry is accepted, including by the deferred check at commit time', async () => {
    await rolledBack(async (trx) => {
      const s = await seed(trx);
      const entryId = await balancedEntry(trx, s);
      // Runs the deferred "entry has postings" trigger now, as COMMIT would.
      await trx.raw('SET CONSTRAINTS ALL IMMEDIATE');
      const { rows } = await trx.raw('SELECT currency, sum(amount) AS total, count(*) AS n FROM postings WHERE entry_id = ? GROUP BY currency', [entryId]);
      assert.deepEqual(rows, [{ currency: 'USD', total: '0.000000', n: '2' }]);
    });
  });

  it('an entry balanced in each of two currencies is accepted', async () => {
    await rolledBack(async (trx) => {
      const s = await seed(trx);
      const entryId = await insertEntry(trx);
      await trx('postings').insert([
        posting(entryId, s.aUsd, s.a, 'USD', '-5.00'), posting(entryId, s.bUsd, s.b, 'USD', '5.00'),
        posting(entryId, s.aEur, s.a, 'EUR', '4.60'), posting(entryId, s.bEur, s.b, 'EUR', '-4.60'),
      ]);
      await trx.raw('SET CONSTRAINTS ALL IMMEDIATE');
    });
  });
});

describe('ledger in Postgres: refuses an entry that does not balance', () => {
  const table: Array<[why: string, postings: (entryId: string, s: Seeded) => object[], message: RegExp]> = [
    ['a single posting', (e, s) => [posting(e, s.aUsd, s.a, 'USD', '5.00')], /journal entry \S+ does not balance in USD: postings sum to 5/],
    ['debits and credits that differ by a cent', (e, s) => [posting(e, s.aUsd, s.a, 'USD', '-5.00'), posting(e, s.bUsd, s.b, 'USD', '4.99')], /does not balance in USD: postings sum to -0\.01/],
    ['debits and credits that differ by a micro-unit', (e, s) => [posting(e, s.aUsd, s.a, 'USD', '-5.000001'), posting(e, s.bUsd, s.b, 'USD', '5.00')], /does not balance in USD: postings sum to -0\.000001/],
    ['amounts that cancel out only across currencies', (e, s) => [posting(e, s.aUsd, s.a, 'USD', '-5.00'), posting(e, s.bEur, s.b, 'EUR', '5.00')], /does not balance in (USD|EUR)/],
  ];
  for (const [why, postings, message] of table) {
    it(`${why} → check_violation`, async () => {
      await rolledBack(async (trx) => {
        const s = await seed(trx);
        const entryId = await insertEntry(trx);
        await assert.rejects(trx.transaction((savepoint) => savepoint('postings').insert(postings(entryId, s))), { message, code: CHECK_VIOLATION });
        assert.deepEqual(await trx('postings').where('entry_id', entryId).select('id'), [], 'no posting of the refused statement remains');
      });
    });
  }

  it('rows written with COPY, as the ledger writes them, are checked the same way', async () => {
    await rolledBack(async (trx) => {
      const s = await seed(trx);
      const entryId = await insertEntry(trx);
      const columns = ['id', 'entry_id', 'ledger_account_id', 'account_id', 'currency', 'amount', 'balance_after'];
      const copied = (rows: object[]) => trx.transaction((savepoint) => copyInto(savepoint, 'postings', columns, rows as Array<Record<string, unknown>>));
      await assert.rejects(copied([posting(entryId, s.aUsd, s.a, 'USD', '-5.00'), posting(entryId, s.bUsd, s.b, 'USD', '4.99')]),
        { message: /does not balance in USD: postings sum to -0\.01/, code: CHECK_VIOLATION });
      assert.equal(await copied([posting(entryId, s.aUsd, s.a, 'USD', '-5.00'), posting(entryId, s.bUsd, s.b, 'USD', '5.00')]), 2);
      await trx.raw('SET CONSTRAINTS ALL IMMEDIATE');
    });
  });

  it('a later statement cannot unbalance an entry that balanced', async () => {
    await rolledBack(async (trx) => {
      const s = await seed(trx);
      const entryId = await balancedEntry(trx, s);
      await assert.rejects(trx('postings').insert(posting(entryId, s.aUsd, s.a, 'USD', '1.00')), { message: /does not balance in USD: postings sum to 1/, code: CHECK_VIOLATION });
    });
  });

  // Postings the database refuses whatever they sum to.
  const refusedPostings: Array<[why: string, postings: (entryId: string, s: Seeded) => object[], expected: { message: RegExp; code?: string }]> = [
    ['a zero posting → check_violation', (e, s) => [posting(e, s.aUsd, s.a, 'USD', '0'), posting(e, s.bUsd, s.b, 'USD', '0')], { message: /postings_amount_not_zero/, code: CHECK_VIOLATION }],
    // The trigger sums postings by their own currency column; unless that column must equal the
    // currency of the ledger account posted to, a USD debit can "balance" a EUR credit: here 5.00
    // leaves a's USD account and 5.00 arrives in b's EUR account, both labelled USD.
    ['a posting labelled with a currency other than its ledger account\'s → refused', (e, s) => [posting(e, s.aUsd, s.a, 'USD', '-5.00'), posting(e, s.bEur, s.b, 'USD', '5.00')], { message: /currency/ }],
    // postings.account_id is what /v1/transactions lists by; it must be the ledger account's owner.
    ['a posting naming an owner other than its ledger account\'s → refused', (e, s) => [posting(e, s.aUsd, s.a, 'USD', '-5.00'), posting(e, s.bUsd, s.a, 'USD', '5.00')], { message: /owner|account_id/ }],
  ];
  for (const [why, postings, expected] of refusedPostings) {
    it(why, async () => {
      await rolledBack(async (trx) => {
        const s = await seed(trx);
        const entryId = await insertEntry(trx);
        await assert.rejects(trx('postings').insert(postings(entryId, s)), expected);
      });
    });
  }
});

describe('ledger in Postgres: refuses an entry without postings', () => {
  it('the insert itself passes; COMMIT is refused by the deferred trigger, and nothing is kept', async () => {
    const entryId = randomUUID();
    let inserted = false;
    await assert.rejects(
      db().transaction(async (trx) => {
        await trx('journal_entries').insert({ id: entryId, kind: 'faucet_credit', command_id: `test:${entryId}` });
        inserted = true;
      }),
      { message: new RegExp(`journal entry ${entryId} has no postings`), code: CHECK_VIOLATION },
    );
    assert.equal(inserted, true, 'the check is deferred to commit, so the insert statement succeeds');
    assert.equal(await db()('journal_entries').where('id', entryId).first(), undefined);
  });

  it('SET CONSTRAINTS ALL IMMEDIATE runs the same check before commit', async () => {
    await rolledBack(async (trx) => {
      await insertEntry(trx);
      await assert.rejects(trx.raw('SET CONSTRAINTS ALL IMMEDIATE'), { message: /has no postings/, code: CHECK_VIOLATION });
    });
  });
});

describe('ledger in Postgres: postings and journal entries are append-only', () => {
  // Each runs on a balanced entry written in the same transaction.
  const table: Array<[why: string, sql: string, message: RegExp]> = [
    ['UPDATE of a posting\'s amount', 'UPDATE postings SET amount = amount * 2 WHERE entry_id = ?', /postings is append-only: UPDATE refused/],
    ['UPDATE of a posting\'s balance_after', 'UPDATE postings SET balance_after = 0 WHERE entry_id = ?', /postings is append-only: UPDATE refused/],
    ['DELETE of a posting', 'DELETE FROM postings WHERE entry_id = ?', /postings is append-only: DELETE refused/],
    ['UPDATE of a journal entry', 'UPDATE journal_entries SET kind = \'faucet_credit\' WHERE id = ?', /journal_entries is append-only: UPDATE refused/],
    ['DELETE of a journal entry', 'DELETE FROM journal_entries WHERE id = ?', /journal_entries is append-only: DELETE refused/],
  ];
  for (const [why, sql, message] of table) {
    it(`${why} → refused`, async () => {
      await rolledBack(async (trx) => {
        const entryId = await balancedEntry(trx, await seed(trx));
        const before = await trx('postings').where('entry_id', entryId).orderBy('seq').select('id', 'amount', 'balance_after');
        // In a savepoint, so the entry can be read back after the refusal.
        await assert.rejects(trx.transaction((savepoint) => savepoint.raw(sql, [entryId])), { message, code: APPEND_ONLY });
        assert.deepEqual(await trx('postings').where('entry_id', entryId).orderBy('seq').select('id', 'amount', 'balance_after'), before);
        assert.equal((await trx('journal_entries').where('id', entryId).first()).kind, 'internal_transfer');
      });
    });
  }

  // TRUNCATE on a table with pending deferred trigger events is refused for that reason alone,
  // so these run in a transaction that has written nothing.
  const truncates: Array<[why: string, sql: string, message: RegExp, code: string]> = [
    ['TRUNCATE of postings', 'TRUNCATE postings', /postings is append-only: TRUNCATE refused/, APPEND_ONLY],
    ['TRUNCATE of journal entries with CASCADE', 'TRUNCATE journal_entries CASCADE', /is append-only: TRUNCATE refused/, APPEND_ONLY],
    ['TRUNCATE of both tables', 'TRUNCATE postings, journal_entries', /is append-only: TRUNCATE refused/, APPEND_ONLY],
    ['TRUNCATE of journal entries alone', 'TRUNCATE journal_entries', /cannot truncate a table referenced in a foreign key constraint/, '0A000'],
  ];
  for (const [why, sql, message, code] of truncates) {
    it(`${why} → refused`, async () => {
      await rolledBack(async (trx) => {
        // TRUNCATE waits for an exclusive lock; never wait long behind the running service.
        await trx.raw("SET LOCAL lock_timeout = '10s'");
        await assert.rejects(trx.raw(sql), { message, code });
      });
    });
  }
});

describe('ledger in Postgres: a customer balance never goes below zero', () => {
  const table: Array<[why: string, kind: 'available' | 'pending']> = [['available', 'available'], ['pending', 'pending']];
  for (const [why, kind] of table) {
    it(`UPDATE of the ${why} balance to -1 → check_violation; to 0 and 1 → accepted`, async () => {
      await rolledBack(async (trx) => {
        const a = await insertAccount(trx, 'ledger-pg');
        const id = await insertLedgerAccount(trx, kind === 'available' ? available(a, 'USD') : pending(a, 'USD'), '1.00');
        await trx('ledger_accounts').where({ id }).update({ balance: '0' });
        await trx('ledger_accounts').where({ id }).update({ balance: '1' });
        await assert.rejects(
          trx.transaction((savepoint) => savepoint('ledger_accounts').where({ id }).update({ balance: '-1' })),
          { message: /customer_balance_never_negative/, code: CHECK_VIOLATION },
        );
        assert.equal((await trx('ledger_accounts').where({ id }).first()).balance, '1.000000');
      });
    });
  }

  it('UPDATE of an available balance to -0.000001 → check_violation', async () => {
    await rolledBack(async (trx) => {
      const id = await insertLedgerAccount(trx, available(await insertAccount(trx, 'ledger-pg'), 'USDC'));
      await assert.rejects(trx('ledger_accounts').where({ id }).update({ balance: '-0.000001' }), { message: /customer_balance_never_negative/, code: CHECK_VIOLATION });
    });
  });

  it('INSERT of a customer ledger account with a negative balance → check_violation', async () => {
    await rolledBack(async (trx) => {
      const a = await insertAccount(trx, 'ledger-pg');
      await assert.rejects(insertLedgerAccount(trx, available(a, 'EUR'), '-1'), { message: /customer_balance_never_negative/, code: CHECK_VIOLATION });
    });
  });

  it('a system account (faucet equity) may go below zero', async () => {
    await rolledBack(async (trx) => {
      const ref: LedgerAccountRef = { code: `sys:test:${randomUUID()}`, accountId: null, kind: 'system', currency: 'USD' };
      const id = await insertLedgerAccount(trx, ref);
      await trx('ledger_accounts').where({ id }).update({ balance: '-1000000.00' });
      assert.equal((await trx('ledger_accounts').where({ id }).first()).balance, '-1000000.000000');
    });
  });

  it('a customer ledger account without an owner, or a system account with one → check_violation', async () => {
    await rolledBack(async (trx) => {
      const ownerless: LedgerAccountRef = { code: `acct:none:available:USD:${randomUUID()}`, accountId: null, kind: 'available', currency: 'USD' };
      await assert.rejects(insertLedgerAccount(trx, ownerless), { message: /customer_accounts_have_owner/, code: CHECK_VIOLATION });
    });
    await rolledBack(async (trx) => {
      const owned: LedgerAccountRef = { code: `sys:test:${randomUUID()}`, accountId: await insertAccount(trx, 'ledger-pg'), kind: 'system', currency: 'USD' };
      await assert.rejects(insertLedgerAccount(trx, owned), { message: /customer_accounts_have_owner/, code: CHECK_VIOLATION });
    });
  });
});
