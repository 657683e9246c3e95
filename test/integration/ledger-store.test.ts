// The ledger store (ledger/store/reads.ts), a round's transaction (ledger/store/round-transaction.ts) and the
// handler's outbox rows (src/outbox/rows.ts) against the real Postgres: ledger accounts
// are created idempotently, locked with their balances, a decided round is written whole, a
// redelivered command cannot be recorded twice, and rounds that lock the same ledger accounts in
// opposite orders never deadlock.
import type { Knex } from 'knex';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { entryRow, eventRow } from '../../src/outbox/rows';
import { BalanceBook } from '../../ledger/balances';
import { available, faucetEquity, held, pending, type LedgerAccountRef } from '../../ledger/chart';
import type { AccountFacts } from '../../ledger/commands/facts';
import { decideFaucetCredit } from '../../ledger/commands/faucet-credit';
import { decideHoldCreate } from '../../ledger/commands/hold-create';
import { decideTransferCreate } from '../../ledger/commands/transfer-create';
import { emptyDecision, post, type Decision } from '../../ledger/decision';
import type { HoldRecord } from '../../ledger/holds';
import { holdOutcome } from '../../ledger/outcome';
import { entry } from '../../ledger/postings';
import type { TransferCreate } from '../../ledger/commands/transfer-create';
import { Money, type Currency } from '../../ledger/money';
import { markRoundsPublished } from '../../src/outbox/rounds';
import { LedgerRound } from '../../ledger/store/round-transaction';
import type { BatchWrite, EntryWrite } from '../../ledger/ports';
import { ensureLedgerAccounts } from '../../ledger/store/reads';
import { createDb } from '../../src/db';
import { db, testService } from '../hooks';
import { accountRow } from '../support/seed-ledger';
import { decidedHold, decidedTransfer, transferIsNew, transitionsOf } from '../support/decisions';

const CONCURRENT_PAIRS = 50;

/** Accounts inserted directly, each with a unique email; KYB active, vIBANs and a chain wallet as facts. */
async function newAccounts(count: number): Promise<AccountFacts[]> {
  const ids = Array.from({ length: count }, () => randomUUID());
  await db()('accounts').insert(ids.map((id) => accountRow(id, 'ledger-store')));
  return ids.map((id) => ({ id, kybStatus: 'active', hasVibans: true, hasChainWallet: true }));
}

const emailOf = (accountId: string) => `ledger-store-${accountId}@example.com`;

function internal(amount: string, currency: Currency, recipientId: string): TransferCreate {
  return { transfer_id: randomUUID(), type: 'internal', amount, currency, recipient_email: emailOf(recipientId), note: null };
}

interface Decided { commandId: string; type: string; decision: Decision }

/** A round that writes nothing, to end a transaction that only locked. */
const nothingDecided = (): BatchWrite => batchOf([], new BalanceBook([]), new Date(), false);

/** A decided batch as the ledger handler writes it (consumers/ledger/handler.ts applyBatch). */
function batchOf(decided: Decided[], book: BalanceBook, now: Date, withOutbox: boolean): BatchWrite {
  const write: BatchWrite = { entries: [], balances: book.changedAccounts(), newTransfers: [], changedTransfers: [], transitions: [], consumedQuotes: [], newPayments: [], changedPayments: [], paymentTransitions: [], processed: [], outbox: [], lateCompletions: [], roundId: randomUUID(), now };
  for (const { commandId, type, decision } of decided) {
    for (const { entry, postings } of decision.entries) {
      const applied: EntryWrite = { id: entry.id, kind: entry.kind, commandId, transferId: entry.transferId, quoteId: entry.quoteId, paymentId: entry.paymentId, postings };
      write.entries.push(applied);
      if (withOutbox) write.outbox.push(entryRow(applied, now));
    }
    if (decidedTransfer(decision)) (transferIsNew(decision) ? write.newTransfers : write.changedTransfers).push(decidedTransfer(decision)!);
    write.transitions.push(...transitionsOf(decision));
    if (withOutbox) write.outbox.push(...decision.events.map((e) => eventRow(e, 'sandbox', now)));
    write.processed.push({ commandId, type, outcome: JSON.stringify(decision.outcome), accountId: null, idempotencyKey: null, fingerprint: null });
  }
  return write;
}

async function balanceOf(ref: LedgerAccountRef, trx: Knex | Knex.Transaction = db()): Promise<string> {
  const row = await trx('ledger_accounts').where('code', ref.code).first('balance');
  return new Money(row.balance).toFixed();
}

/** Sum of an account's postings, which must equal its stored balance. */
async function postedTo(ref: LedgerAccountRef): Promise<string> {
  const { rows } = await db().raw('SELECT coalesce(sum(p.amount), 0) AS total FROM postings p JOIN ledger_accounts la ON la.id = p.ledger_account_id WHERE la.code = ?', [ref.code]);
  return new Money(rows[0].total).toFixed();
}

/** Credits test funds through the faucet rule, committed, as the ledger handler would. */
async function fund(accountId: string, currency: Currency, amount: string, on: Knex = db()): Promise<void> {
  const refs = [faucetEquity(currency), available(accountId, currency)];
  await ensureLedgerAccounts(on, refs);
  await LedgerRound.run(on, async (round) => {
    const book = new BalanceBook((await round.lock({ refs })).balances);
    const decision = decideFaucetCredit(accountId, { entry_id: randomUUID(), currency, amount }, book);
    await round.commit(batchOf([{ commandId: randomUUID(), type: 'faucet.credit', decision }], book, new Date(), false));
  });
}

describe('ledger store: ensureLedgerAccounts', () => {
  it('creates each missing ledger account once, however often and however concurrently it is called', async () => {
    const [account] = await newAccounts(1);
    const refs = [available(account.id, 'USD'), pending(account.id, 'USD'), available(account.id, 'USD'), available(account.id, 'USDC'), faucetEquity('USD')];
    const codes = [...new Set(refs.map((r) => r.code))];

    await ensureLedgerAccounts(db(), refs);
    const first = await db()('ledger_accounts').whereIn('code', codes).orderBy('code').select('id', 'code', 'account_id', 'kind', 'currency');
    assert.equal(first.length, 4);

    await ensureLedgerAccounts(db(), refs);
    await Promise.all(Array.from({ length: 5 }, () => ensureLedgerAccounts(db(), [...refs].reverse())));
    const again = await db()('ledger_accounts').whereIn('code', codes).orderBy('code').select('id', 'code', 'account_id', 'kind', 'currency');
    assert.deepEqual(again, first, 'the same rows, with the same ids');

    const mine = again.filter((r) => r.account_id === account.id);
    assert.deepEqual(mine.map((r) => [r.kind, r.currency]).sort(), [['available', 'USD'], ['available', 'USDC'], ['pending', 'USD']]);
    for (const ref of refs.filter((r) => r.accountId)) assert.equal(await balanceOf(ref), '0');
    assert.equal(again.find((r) => r.code === 'sys:faucet:USD').account_id, null);
  });

  it('an empty list is a no-op', async () => {
    await ensureLedgerAccounts(db(), []);
  });
});

describe('ledger round: lock', () => {
  it('returns each ledger account with its balance and ref, in code order, whatever order they were asked in', async () => {
    const [a, b] = await newAccounts(2);
    await fund(a.id, 'USD', '12.34');
    await fund(b.id, 'USDC', '0.000001');
    const refs = [available(b.id, 'USDC'), pending(a.id, 'USD'), available(a.id, 'USD')];
    await ensureLedgerAccounts(db(), refs);

    const states = await LedgerRound.run(db(), async (round) => {
      const { balances } = await round.lock({ refs });
      await round.commit(nothingDecided());
      return balances;
    });

    const byCode = new Map(states.map((s) => [s.ref.code, s]));
    assert.equal(states.length, 3);
    const { rows: sorted } = await db().raw('SELECT code FROM ledger_accounts WHERE code = ANY(?::text[]) ORDER BY code', [refs.map((r) => r.code)]);
    assert.deepEqual(states.map((s) => s.ref.code), sorted.map((r: { code: string }) => r.code), 'in the one global lock order');
    assert.equal(byCode.get(available(a.id, 'USD').code)!.balance.toFixed(), '12.34');
    assert.equal(byCode.get(pending(a.id, 'USD').code)!.balance.toFixed(), '0');
    assert.equal(byCode.get(available(b.id, 'USDC').code)!.balance.toFixed(), '0.000001');
    assert.ok(states.every((s) => s.balance instanceof Money), 'balances are exact decimals, not numbers');
    assert.deepEqual(byCode.get(available(b.id, 'USDC').code)!.ref, available(b.id, 'USDC'));
    const rows = await db()('ledger_accounts').whereIn('code', refs.map((r) => r.code)).select('id', 'code');
    for (const row of rows) assert.equal(byCode.get(row.code)!.id, row.id);
  });

  it('holds the rows: a second locker waits until the first commits', async () => {
    const [a] = await newAccounts(1);
    const refs = [available(a.id, 'EUR')];
    await ensureLedgerAccounts(db(), refs);
    const order: string[] = [];
    let releaseFirst!: () => void;
    const firstMayCommit = new Promise<void>((resolve) => { releaseFirst = resolve; });
    let firstLocked!: () => void;
    const firstHasLock = new Promise<void>((resolve) => { firstLocked = resolve; });

    const first = LedgerRound.run(db(), async (round) => {
      await round.lock({ refs });
      firstLocked();
      await firstMayCommit;
      order.push('first commits');
      await round.commit(nothingDecided());
    });
    await firstHasLock;
    const second = LedgerRound.run(db(), async (round) => {
      await round.lock({ refs });
      order.push('second locked');
      await round.commit(nothingDecided());
    });
    // Wait, with a deadline, until Postgres shows the second transaction waiting for a row lock.
    try {
      const deadline = Date.now() + 5_000;
      for (;;) {
        const { rows: waitingRows } = await db().raw('SELECT 1 FROM pg_stat_activity WHERE wait_event_type = ? AND query LIKE ?', ['Lock', `%${refs[0].code}%`]);
        const waiting = waitingRows.length === 1;
        if (waiting) break;
        assert.ok(Date.now() < deadline, 'the second transaction never waited for the lock');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      assert.deepEqual(order, []);
    } finally {
      releaseFirst();
    }
    await Promise.all([first, second]);
    assert.deepEqual(order, ['first commits', 'second locked']);
  });
});

describe('ledger round: commit', () => {
  // A small round is written by one statement, a large one by COPY table by table: both are run here.
  for (const [path, oneStatementMax] of [['one statement', undefined], ['COPY', 0]] as const) {
  it(`writes entries, postings, balances, transfers, transitions, processed commands and outbox rows together (${path}), and removes the marks of published rounds`, async () => {
    const earlier = randomUUID();
    await db()('outbox_rounds').insert({ round_id: earlier, messages: JSON.stringify([]), events: JSON.stringify([]) });
    const [a, b] = await newAccounts(2);
    const refs = [faucetEquity('USD'), available(a.id, 'USD'), pending(a.id, 'USD'), available(b.id, 'USD')];
    await ensureLedgerAccounts(db(), refs);
    const faucetCommand = randomUUID();
    const transferCommand = randomUUID();
    const now = new Date();

    let faucetBefore = '';
    let write!: BatchWrite;
    await LedgerRound.run(db(), async (round) => {
      const book = new BalanceBook((await round.lock({ refs })).balances);
      faucetBefore = book.balance(faucetEquity('USD')).toFixed();
      const credit = decideFaucetCredit(a.id, { entry_id: randomUUID(), currency: 'USD', amount: '100' }, book);
      const transfer = decideTransferCreate(transferCommand, internal('40.5', 'USD', b.id), { sender: a, recipient: b }, book, now);
      assert.deepEqual([transfer.outcome.kind, transfer.outcome.kind === 'transfer' && transfer.outcome.created], ['transfer', true]);
      write = batchOf([
        { commandId: faucetCommand, type: 'faucet.credit', decision: credit },
        { commandId: transferCommand, type: 'transfer.create', decision: transfer },
      ], book, now, true);
      await round.commit(write, [earlier], oneStatementMax);
    });
    assert.equal(await db()('outbox_rounds').where('round_id', earlier).first(), undefined, 'the earlier round is marked published');
    try {
      // Outbox: the account events kept for good, numbered in each account's sequence; the round,
      // until published, with the messages no other table keeps and its events by reference, in order.
      assert.equal(write.outbox.length, 2 + 1 + 5); // two entries, a faucet balance event, three transfer and two balance events
      const events = write.outbox.filter((o) => o.accountId !== null);
      const stored = await db()('account_events').whereIn('id', events.map((e) => e.id)).select('id', 'account_id', 'account_seq', 'payload');
      assert.deepEqual(stored.map((e) => e.id).sort(), events.map((e) => e.id).sort());
      for (const row of stored) assert.equal(row.payload.account_seq, Number(row.account_seq), 'the payload carries its number');
      assert.deepEqual(stored.filter((e) => e.account_id === a.id).map((e) => Number(e.account_seq)).sort(), [1, 2, 3, 4, 5]);
      assert.deepEqual(stored.filter((e) => e.account_id === b.id).map((e) => Number(e.account_seq)), [1]);
      const round = await db()('outbox_rounds').where('round_id', write.roundId).first();
      assert.ok(round, 'the round waits for publication');
      assert.deepEqual(round.messages.map((m: { key: string }) => m.key), write.entries.map((e) => e.id), 'the entries, in order');
      assert.deepEqual(round.events, events.map((e) => [e.accountId, e.accountSeq]), 'its events, by reference, in order');

      // Entries and postings: each entry balances, and postings carry the balance they left.
      const entries = await db()('journal_entries').whereIn('id', write.entries.map((e) => e.id)).select('id', 'kind', 'command_id', 'transfer_id');
      assert.deepEqual(entries.map((e) => [e.kind, e.command_id]).sort(), [['faucet_credit', faucetCommand], ['internal_transfer', transferCommand]]);
      const { rows: sums } = await db().raw('SELECT entry_id, currency, sum(amount) AS total, count(*) AS n FROM postings WHERE entry_id = ANY(?::uuid[]) GROUP BY 1, 2', [write.entries.map((e) => e.id)]);
      assert.equal(sums.length, 2);
      for (const sum of sums) assert.deepEqual([new Money(sum.total).toFixed(), sum.n], ['0', '2']);
      const faucetPosting = await db()('postings').where({ entry_id: write.entries[0].id }).whereNull('account_id').first();
      assert.equal(new Money(faucetPosting.amount).toFixed(), '-100');
      assert.equal(new Money(faucetPosting.balance_after).toFixed(), new Money(faucetBefore).minus(100).toFixed());

      // Final balances, and each equals the sum of its postings.
      assert.equal(await balanceOf(available(a.id, 'USD')), '59.5');
      assert.equal(await balanceOf(pending(a.id, 'USD')), '0');
      assert.equal(await balanceOf(available(b.id, 'USD')), '40.5');
      for (const ref of [available(a.id, 'USD'), pending(a.id, 'USD'), available(b.id, 'USD')]) {
        assert.equal(await postedTo(ref), await balanceOf(ref), ref.code);
      }

      // The transfer and its history.
      const transferId = write.newTransfers[0].id;
      const transfer = await db()('transfers').where('id', transferId).first();
      assert.equal(transfer.status, 'completed');
      assert.equal(transfer.command_id, transferCommand);
      assert.equal(new Money(transfer.amount).toFixed(), '40.5');
      assert.deepEqual(transfer.recipient, { email: emailOf(b.id) });
      assert.match(transfer.partner_payment_id, /^book_[0-9a-f]{32}$/);
      assert.deepEqual(transfer.status_history.map((h: { from: string | null; to: string }) => [h.from, h.to]), [[null, 'pending'], ['pending', 'quoting'], ['quoting', 'executing'], ['executing', 'completed']]);

      // Processed commands hold the replies a redelivery re-sends.
      const processed = await db()('processed_commands').whereIn('command_id', [faucetCommand, transferCommand]).orderBy('type').select('command_id', 'type', 'outcome');
      assert.deepEqual(processed.map((p) => [p.command_id, p.type, p.outcome.kind]), [[faucetCommand, 'faucet.credit', 'faucet_credit'], [transferCommand, 'transfer.create', 'transfer']]);
      assert.equal(processed[0].outcome.amount, '100.00');
      assert.equal(processed[1].outcome.created, true);
      assert.equal(processed[1].outcome.transfer.id, transferId);
      assert.equal(processed[1].outcome.transfer.amount, '40.5');
    } finally {
      await markRoundsPublished(db(), [write.roundId]);
    }
    const left = await db()('outbox_rounds').where('round_id', write.roundId).first();
    assert.equal(left, undefined, 'a published round is no longer listed');
  });

  it(`writes a changed hold as its decision left it, its amount too, with the entry that moved the difference (${path})`, async () => {
    const [a] = await newAccounts(1);
    const refs = [faucetEquity('USD'), available(a.id, 'USD'), held(a.id, 'USD'), pending(a.id, 'USD')];
    await ensureLedgerAccounts(db(), refs);
    const now = new Date();
    let hold!: HoldRecord;
    await LedgerRound.run(db(), async (round) => {
      const book = new BalanceBook((await round.lock({ refs })).balances);
      const credit = decideFaucetCredit(a.id, { entry_id: randomUUID(), currency: 'USD', amount: '100' }, book);
      const created = decideHoldCreate(randomUUID(), a.id, {
        hold_id: randomUUID(), amount: '40', currency: 'USD', wallet_id: null, expires_at: new Date(now.getTime() + 3_600_000).toISOString(), description: null,
      }, { account: a, wallets: new Map() }, book, now);
      hold = decidedHold(created)!;
      const write = batchOf([{ commandId: randomUUID(), type: 'faucet.credit', decision: credit }, { commandId: randomUUID(), type: 'hold.create', decision: created }], book, now, false);
      await round.commit({ ...write, newHolds: [hold] }, [], oneStatementMax);
    });
    await LedgerRound.run(db(), async (round) => {
      const book = new BalanceBook((await round.lock({ refs })).balances);
      const raised: HoldRecord = { ...hold, amount: '52.5', updated_at: now };
      const decision = emptyDecision(holdOutcome(raised, false));
      post(decision, book, entry(randomUUID(), 'hold_create', {}, [{ account: available(a.id, 'USD'), amount: new Money('-12.5') }, { account: held(a.id, 'USD'), amount: new Money('12.5') }]));
      const write = batchOf([{ commandId: randomUUID(), type: 'hold.create', decision }], book, now, false);
      await round.commit({ ...write, changedHolds: [raised] }, [], oneStatementMax);
    });
    const stored = await db()('holds').where('id', hold.id).first();
    assert.deepEqual([new Money(stored.amount).toFixed(), stored.status], ['52.5', 'active']);
    assert.deepEqual([await balanceOf(available(a.id, 'USD')), await balanceOf(held(a.id, 'USD'))], ['47.5', '52.5']);
  });

  it(`refuses a round with an entry that does not balance, and writes nothing of it (${path})`, async () => {
    const [a] = await newAccounts(1);
    const refs = [faucetEquity('EUR'), available(a.id, 'EUR')];
    await ensureLedgerAccounts(db(), refs);
    let write!: BatchWrite;
    await assert.rejects(LedgerRound.run(db(), async (round) => {
      const book = new BalanceBook((await round.lock({ refs })).balances);
      const decision = decideFaucetCredit(a.id, { entry_id: randomUUID(), currency: 'EUR', amount: '10' }, book);
      write = batchOf([{ commandId: randomUUID(), type: 'faucet.credit', decision }], book, new Date(), true);
      const posting = write.entries[0].postings[0];
      write.entries[0].postings[0] = { ...posting, amount: posting.amount.plus('0.01') }; // a cent made out of nothing
      await round.commit(write, [], oneStatementMax);
    }), /journal entry [0-9a-f-]+ does not balance in EUR/);
    assert.equal(await db()('journal_entries').where('id', write.entries[0].id).first(), undefined);
    assert.equal(await db()('outbox_rounds').where('round_id', write.roundId).first(), undefined);
    assert.equal(await balanceOf(available(a.id, 'EUR')), '0');
  });
  }

  it('a second batch with an already processed command id fails on the primary key, and writes nothing', async () => {
    const [a] = await newAccounts(1);
    const refs = [faucetEquity('GBP'), available(a.id, 'GBP')];
    await ensureLedgerAccounts(db(), refs);
    const commandId = randomUUID();
    const credit = async (entryId: string) => LedgerRound.run(db(), async (round) => {
      const book = new BalanceBook((await round.lock({ refs })).balances);
      const decision = decideFaucetCredit(a.id, { entry_id: entryId, currency: 'GBP', amount: '25' }, book);
      await round.commit(batchOf([{ commandId, type: 'faucet.credit', decision }], book, new Date(), false));
    });

    await credit(randomUUID());
    assert.equal(await balanceOf(available(a.id, 'GBP')), '25');

    const redelivered = randomUUID();
    await assert.rejects(credit(redelivered), { message: /duplicate key value violates unique constraint "processed_commands_pkey"/, code: '23505' });

    assert.equal(await balanceOf(available(a.id, 'GBP')), '25');
    assert.equal(await postedTo(available(a.id, 'GBP')), '25');
    assert.equal(await db()('journal_entries').where('id', redelivered).first(), undefined);
    assert.equal(await db()('postings').where('entry_id', redelivered).first(), undefined);
    const { rows } = await db().raw('SELECT count(*) AS n FROM processed_commands WHERE command_id = ?', [commandId]);
    assert.equal(rows[0].n, '1');
  });
});

describe('ledger round: the small round\'s write', () => {
  it('is one prepared statement, planned once per connection and never again', async () => {
    const [account] = await newAccounts(1);
    // One connection, so every round and the look-up below share its prepared statements.
    const single = createDb(testService().config.databaseUrl, 1);
    try {
      for (const amount of ['1.10', '2.20', '3.30']) await fund(account.id, 'USD', amount, single);
      const { rows } = await single.raw(`SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE name = 'ledger_round_write'`);
      assert.equal(rows.length, 1, 'prepared on the connection');
      assert.deepEqual([Number(rows[0].generic_plans), Number(rows[0].custom_plans)], [3, 0], 'each run used the plan made once');
    } finally {
      await single.destroy();
    }
    assert.equal(await balanceOf(available(account.id, 'USD')), '6.6');
  });

  it('is prepared on the warmed connections before any round, in a transaction rolled back, and the first round runs on that plan', async () => {
    const [account] = await newAccounts(1);
    const pair = createDb(testService().config.databaseUrl, 2);
    type Client = { query(sql: string): Promise<{ rows: Array<Record<string, string | null>> }> };
    const plansOnEach = async (): Promise<Array<[number, number]>> => {
      const clients = (await Promise.all([pair.client.acquireConnection(), pair.client.acquireConnection()])) as Client[];
      try {
        return await Promise.all(clients.map(async (client) => {
          assert.equal((await client.query('SELECT txid_current_if_assigned() AS open')).rows[0].open, null, 'no transaction left open');
          const { rows } = await client.query(`SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE name = 'ledger_round_write'`);
          assert.equal(rows.length, 1, 'prepared on each warmed connection');
          return [Number(rows[0].generic_plans), Number(rows[0].custom_plans)] as [number, number];
        }));
      } finally {
        await Promise.all(clients.map((client) => pair.client.releaseConnection(client)));
      }
    };
    try {
      await LedgerRound.warm(pair, 2);
      assert.deepEqual(await plansOnEach(), [[1, 0], [1, 0]], 'planned once, generically, on each connection');
      await fund(account.id, 'USD', '4.25', pair);
      const after = await plansOnEach();
      assert.deepEqual([after.reduce((n, [generic]) => n + generic, 0), after.reduce((n, [, custom]) => n + custom, 0)], [3, 0], 'the round ran on a plan made by the warm-up');
    } finally {
      await pair.destroy();
    }
    assert.equal(await balanceOf(available(account.id, 'USD')), '4.25');
  });
});

describe('ledger store: lock order', () => {
  it(`${CONCURRENT_PAIRS} pairs of transfers locking the same two ledger accounts in opposite orders all commit, without a deadlock`, async () => {
    const [a, b] = await newAccounts(2);
    await fund(a.id, 'USD', '60.00');
    await fund(b.id, 'USD', '40.00');
    const aToB = [available(a.id, 'USD'), pending(a.id, 'USD'), available(b.id, 'USD')];
    const bToA = [available(b.id, 'USD'), pending(b.id, 'USD'), available(a.id, 'USD')];
    await ensureLedgerAccounts(db(), [...aToB, ...bToA]);

    /** One transfer of 0.01, locking `refs` in the order given (the round sorts them). */
    const send = (sender: AccountFacts, recipient: AccountFacts, refs: LedgerAccountRef[]) => LedgerRound.run(db(), async (round) => {
      const book = new BalanceBook((await round.lock({ refs })).balances);
      // Hold the locks a moment, so the two halves of a pair overlap.
      await new Promise((resolve) => setTimeout(resolve, 5));
      const commandId = randomUUID();
      const decision = decideTransferCreate(commandId, internal('0.01', 'USD', recipient.id), { sender, recipient }, book, new Date());
      assert.equal(decision.outcome.kind, 'transfer', JSON.stringify(decision.outcome));
      await round.commit(batchOf([{ commandId, type: 'transfer.create', decision }], book, new Date(), false));
      return decidedTransfer(decision)!.id;
    });

    const outcomes = await Promise.allSettled(Array.from({ length: CONCURRENT_PAIRS }, () => [send(a, b, aToB), send(b, a, bToA)]).flat());

    const failures = outcomes.flatMap((o) => (o.status === 'rejected' ? [String(o.reason?.message ?? o.reason)] : []));
    assert.deepEqual(failures, [], 'no transaction failed (a deadlock would show here as "deadlock detected")');
    const transferIds = outcomes.map((o) => (o as PromiseFulfilledResult<string>).value);
    const { rows } = await db().raw('SELECT status, count(*) AS n FROM transfers WHERE id = ANY(?::uuid[]) GROUP BY status', [transferIds]);
    assert.deepEqual(rows, [{ status: 'completed', n: String(2 * CONCURRENT_PAIRS) }]);

    // Final balances: every 0.01 one way came back the other way.
    assert.equal(await balanceOf(available(a.id, 'USD')), '60');
    assert.equal(await balanceOf(available(b.id, 'USD')), '40');
    for (const ref of [available(a.id, 'USD'), available(b.id, 'USD')]) assert.equal(await postedTo(ref), await balanceOf(ref), ref.code);
  });

  it('control: locking the same two rows one at a time in opposite orders does deadlock', async () => {
    const [a, b] = await newAccounts(2);
    const [first, second] = [available(a.id, 'EUR'), available(b.id, 'EUR')];
    await ensureLedgerAccounts(db(), [first, second]);
    const lockOne = (trx: Knex.Transaction, ref: LedgerAccountRef) => trx.raw('SELECT id FROM ledger_accounts WHERE code = ? FOR UPDATE', [ref.code]);

    let bothHoldOne!: () => void;
    let holders = 0;
    const barrier = new Promise<void>((resolve) => { bothHoldOne = resolve; });
    const naive = (one: LedgerAccountRef, other: LedgerAccountRef) => db().transaction(async (trx) => {
      await trx.raw("SET LOCAL lock_timeout = '20s'");
      await lockOne(trx, one);
      holders += 1;
      if (holders === 2) bothHoldOne();
      await barrier;
      await lockOne(trx, other);
    });

    const outcomes = await Promise.allSettled([naive(first, second), naive(second, first)]);
    const reasons = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason] : []));
    assert.equal(reasons.length, 1, 'Postgres aborts exactly one of the two');
    assert.match(reasons[0].message, /deadlock detected/);
    assert.equal(reasons[0].code, '40P01');
  });
});
