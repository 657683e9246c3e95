// A round of the ledger (ledger/round.ts) on its store port held in memory
// (test/support/memory-ledger-store.ts): commands parsed as the consumer parses them, decided in
// order on one locked book, written whole or not at all. Then a seeded walk of faucet credits,
// transfers and reversals across rounds, each answer and every balance checked against a model.
// Pure: no Postgres, no broker.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { parseCommand } from '../../consumers/ledger/plan';
import type { AccountFacts } from '../../ledger/commands/facts';
import type { CommandType } from '../../ledger/commands';
import type { LedgerCommandEnvelope } from '../../ledger/messages';
import { formatAmount, Money, type Amount } from '../../ledger/money';
import type { Outcome } from '../../ledger/outcome';
import { runRound, type OutboxRows, type RoundSettings } from '../../ledger/round';
import { MemoryLedgerStore } from '../support/memory-ledger-store';
import { prng } from '../support/prng';
import { namingSeed, replayOf, seeds } from '../support/seeds';

interface Account { facts: AccountFacts; email: string }
interface Sent { type: CommandType; accountId: string; payload: Record<string, unknown> }

const ROWS: OutboxRows = {
  event: (event) => ({ id: randomUUID(), topic: 'events', key: event.accountId, accountId: event.accountId, payload: event }),
  entry: (entry) => ({ id: randomUUID(), topic: 'entries', key: entry.id, accountId: null, payload: entry }),
  partnerCommand: (partner, accountId, payload) => ({ id: randomUUID(), topic: `partner.${partner}`, key: accountId, accountId, payload }),
};

function newAccount(): Account {
  const id = randomUUID();
  return { facts: { id, kybStatus: 'active', hasVibans: true, hasChainWallet: false }, email: `${id.slice(0, 8)}@example.test` };
}

/** Runs one round of `sent` on `store`, its accounts known to it; the outcomes in order. */
async function round(store: MemoryLedgerStore, accounts: Account[], sent: Sent[], settings: Partial<RoundSettings> = {}, clockTimes = new Map<string, Date>()): Promise<Outcome[]> {
  const parsed = sent.map(({ type, accountId, payload }) => parseCommand({
    id: randomUUID(), type, account_id: accountId, reply_to: null, issued_at: new Date().toISOString(), payload: JSON.stringify(payload),
  } satisfies LedgerCommandEnvelope));
  for (const account of accounts) store.customers.set(account.facts.id, account);
  for (const [id, time] of clockTimes) store.clockTimes.set(id, time);
  const outcome = await runRound(store, { rows: ROWS, ...settings }, parsed, []);
  return parsed.map((p) => JSON.parse(outcome.outcomes.get(p.envelope.id)!) as Outcome);
}

const faucet = (account: Account, amount: string): Sent => ({ type: 'faucet.credit', accountId: account.facts.id, payload: { entry_id: randomUUID(), currency: 'USD', amount } });
const transfer = (from: Account, to: Account, amount: string, id = randomUUID()): Sent => ({
  type: 'transfer.create', accountId: from.facts.id, payload: { transfer_id: id, type: 'internal', amount, currency: 'USD', recipient_email: to.email, note: null },
});
const reverse = (sender: Account, transferId: string, amount: string | null): Sent => ({
  type: 'transfer.reverse', accountId: sender.facts.id, payload: { transfer_id: transferId, reversal_id: randomUUID(), amount, reason: null },
});
const availableUsd = (store: MemoryLedgerStore, account: Account) => store.balance(`acct:${account.facts.id}:available:USD`);
const codeOf = (outcome: Outcome) => (outcome.kind === 'refused' ? outcome.code : outcome.kind);

describe('a ledger round on its store port, in memory', () => {
  it('decides its commands in order on one book: a transfer spends a credit of the same round, the next finds too little, and all is written', async () => {
    const store = new MemoryLedgerStore();
    const [alice, bob] = [newAccount(), newAccount()];
    const outcomes = await round(store, [alice, bob], [faucet(alice, '50.00'), transfer(alice, bob, '30.00'), transfer(alice, bob, '30.00')]);
    assert.deepEqual(outcomes.map(codeOf), ['faucet_credit', 'transfer', 'insufficient_funds']);
    assert.deepEqual([availableUsd(store, alice), availableUsd(store, bob)], ['20', '30']);
    assert.equal(store.processed.size, 3, 'every command recorded as decided, the refused one too');
    assert.deepEqual(store.entries.map((e) => e.kind), ['faucet_credit', 'internal_transfer']);
  });

  it('keeps nothing of a round whose write fails, and decides its commands again in the next', async () => {
    const store = new MemoryLedgerStore();
    const [alice, bob] = [newAccount(), newAccount()];
    await round(store, [alice, bob], [faucet(alice, '10.00')]);
    const failing: OutboxRows = { ...ROWS, entry: () => { throw new Error('the outbox refused the row'); } };
    await assert.rejects(round(store, [alice, bob], [transfer(alice, bob, '4.00')], { rows: failing }), /the outbox refused the row/);
    assert.deepEqual([availableUsd(store, alice), availableUsd(store, bob), store.transfers.size, store.processed.size], ['10', '0', 0, 1]);
    assert.deepEqual((await round(store, [alice, bob], [transfer(alice, bob, '4.00')])).map(codeOf), ['transfer']);
    assert.deepEqual([availableUsd(store, alice), availableUsd(store, bob)], ['6', '4']);
  });

  it('decides a command of an account on a test clock at the clock\'s time, its records and events with it, and the others at the wall\'s', async () => {
    const store = new MemoryLedgerStore();
    const [alice, bob] = [newAccount(), newAccount()];
    const clockTime = new Date('2031-05-01T12:00:00.000Z');
    const told: Array<{ resourceId: string; at: string }> = [];
    const rows: OutboxRows = { ...ROWS, event: (event, at) => { told.push({ resourceId: event.resourceId, at: at.toISOString() }); return ROWS.event(event, at); } };
    const [onClock, onWall] = [randomUUID(), randomUUID()];
    const before = Date.now();
    await round(store, [alice, bob], [faucet(alice, '5.00'), faucet(bob, '5.00'), transfer(alice, bob, '1.00', onClock), transfer(bob, alice, '1.00', onWall)],
      { rows }, new Map([[alice.facts.id, clockTime]]));
    assert.equal(store.transfers.get(onClock)!.created_at.toISOString(), clockTime.toISOString());
    const wall = store.transfers.get(onWall)!.created_at.getTime();
    assert.ok(wall >= before && wall <= Date.now(), 'a transfer of an account on no clock is made at the wall\'s time');
    const at = (transferId: string) => [...new Set(told.filter((e) => e.resourceId === transferId).map((e) => e.at))];
    assert.deepEqual(at(onClock), [clockTime.toISOString()], 'the events of the clock\'s command carry its time');
    assert.deepEqual(at(onWall), [new Date(wall).toISOString()], 'the others the round\'s own');
  });

  for (const seed of seeds([1, 2, 3])) {
    it(`follows a model of balances and reversals through generated rounds (${replayOf(seed)})`, () => namingSeed(seed, async () => {
      const random = prng(seed);
      const pickOf = <T>(list: T[]): T => list[Math.floor(random() * list.length)];
      const cents = (max: number) => formatAmount(new Money(1 + Math.floor(random() * max)).dividedBy(100), 'USD');
      const store = new MemoryLedgerStore();
      const accounts = [newAccount(), newAccount(), newAccount()];
      const balance = new Map(accounts.map((a) => [a.facts.id, new Money(0)]));
      const transfers: Array<{ id: string; from: Account; to: Account; amount: Amount; reversed: Amount }> = [];
      for (let r = 0; r < 40; r++) {
        // Each round: commands on transfers decided in earlier rounds (a client learns a transfer's id from its answer).
        const known = [...transfers];
        const planned: Array<{ sent: Sent; expect: () => string }> = [];
        for (let c = 0, n = 1 + Math.floor(random() * 6); c < n; c++) {
          const choice = random();
          if (choice < 0.25) {
            const account = pickOf(accounts);
            const amount = cents(5_000);
            planned.push({ sent: faucet(account, amount), expect: () => { balance.set(account.facts.id, balance.get(account.facts.id)!.plus(amount)); return 'faucet_credit'; } });
          } else if (choice < 0.7 || known.length === 0) {
            const from = pickOf(accounts);
            const to = pickOf(accounts.filter((a) => a !== from));
            const amount = new Money(cents(3_000));
            const id = randomUUID();
            planned.push({ sent: transfer(from, to, amount.toFixed(2), id), expect: () => {
              if (balance.get(from.facts.id)!.isLessThan(amount)) return 'insufficient_funds';
              balance.set(from.facts.id, balance.get(from.facts.id)!.minus(amount));
              balance.set(to.facts.id, balance.get(to.facts.id)!.plus(amount));
              transfers.push({ id, from, to, amount, reversed: new Money(0) });
              return 'transfer';
            } });
          } else {
            const target = pickOf(known);
            const asked = random() < 0.3 ? null : new Money(cents(target.amount.times(100).toNumber() + 50));
            planned.push({ sent: reverse(target.from, target.id, asked === null ? null : asked.toFixed(2)), expect: () => {
              const left = target.amount.minus(target.reversed);
              const amount = asked ?? left;
              if (left.isZero() || amount.isGreaterThan(left)) return 'reversal_exceeded';
              if (balance.get(target.to.facts.id)!.isLessThan(amount)) return 'insufficient_funds';
              balance.set(target.to.facts.id, balance.get(target.to.facts.id)!.minus(amount));
              balance.set(target.from.facts.id, balance.get(target.from.facts.id)!.plus(amount));
              target.reversed = target.reversed.plus(amount);
              return 'transfer';
            } });
          }
        }
        const outcomes = await round(store, accounts, planned.map((p) => p.sent));
        assert.deepEqual(outcomes.map(codeOf), planned.map((p) => p.expect()), `round ${r}`);
        for (const account of accounts) assert.equal(availableUsd(store, account), balance.get(account.facts.id)!.toFixed(), `round ${r}: the balance of ${account.email}`);
        for (const t of transfers) assert.equal(new Money(store.transfers.get(t.id)!.reversed_amount ?? 0).toFixed(), t.reversed.toFixed(), `round ${r}: reversed of ${t.id}`);
      }
      assert.ok(transfers.some((t) => t.reversed.isPositive()), 'the walk reversed something');
    }));
  }
});
