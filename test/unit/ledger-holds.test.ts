// The ledger's decisions on wallet transfers and holds (ledger/commands/wallet-transfer.ts,
// ledger/commands/hold-*.ts), and on transfers and batches sent from a wallet
// (ledger/commands/transfer-create.ts, transfer-batch.ts), as STYLE.md asks of a new command: the refusals as a table in order of
// precedence, each changing nothing, then a seeded random walk of holds, captures, voids, expiries,
// wallet transfers and transfer batches that checks the invariants after every step: no balance below zero, every
// entry balanced, each hold's money captured, released or still held (never twice), the held
// balances equal to what active holds have left, and all money conserved.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { BalanceBook, type LedgerAccountState } from '../../ledger/balances';
import { available, faucetEquity, held, pending, walletAvailable, walletHeld, type LedgerAccountRef } from '../../ledger/chart';
import type { AccountFacts } from '../../ledger/commands/facts';
import { decideFaucetCredit } from '../../ledger/commands/faucet-credit';
import { decideHoldCapture } from '../../ledger/commands/hold-capture';
import { decideHoldCreate } from '../../ledger/commands/hold-create';
import { decideHoldExpire, decideHoldVoid } from '../../ledger/commands/hold-release';
import { decideTransferBatch } from '../../ledger/commands/transfer-batch';
import { decideTransferCreate } from '../../ledger/commands/transfer-create';
import { decidePartnerResult } from '../../ledger/commands/transfer-partner-result';
import { decideWalletTransfer } from '../../ledger/commands/wallet-transfer';
import type { Decision } from '../../ledger/decision';
import type { HoldRecord } from '../../ledger/holds';
import type { TransferCreate } from '../../ledger/commands/transfer-create';
import type { TransferPartnerResult } from '../../ledger/commands/transfer-partner-result';
import { Money } from '../../ledger/money';
import type { TransferRecord } from '../../ledger/transfers';
import type { WalletRecord } from '../../ledger/wallets';
import { prng } from '../support/prng';
import { decidedHold, decidedTransfer, lateCompletionOf, partnerCommandOf } from '../support/decisions';

const NOW = new Date('2026-11-29T12:00:00.000Z');
const HOUR_LATER = new Date(NOW.getTime() + 3_600_000).toISOString();
const facts = (id: string, kybStatus = 'active'): AccountFacts => ({ id, kybStatus, hasVibans: true, hasChainWallet: false });

class World {
  readonly payer = randomUUID();
  readonly payee = randomUUID();
  readonly wallet: WalletRecord = { id: randomUUID(), account_id: this.payer, closed_at: null };
  readonly foreign: WalletRecord = { id: randomUUID(), account_id: this.payee, closed_at: null };
  readonly wallets = new Map([[this.wallet.id, this.wallet], [this.foreign.id, this.foreign]]);
  readonly refs: LedgerAccountRef[] = [
    faucetEquity('USD'), ...[this.payer, this.payee].flatMap((id) => [available(id, 'USD'), pending(id, 'USD'), held(id, 'USD')]),
    walletAvailable(this.wallet.id, this.payer, 'USD'), walletHeld(this.wallet.id, this.payer, 'USD'),
    walletAvailable(this.foreign.id, this.payee, 'USD'), walletHeld(this.foreign.id, this.payee, 'USD'),
  ];
  readonly book = new BalanceBook(this.refs.map((ref): LedgerAccountState => ({ id: randomUUID(), ref, balance: new Money(0) })));
  readonly holds = new Map<string, HoldRecord>();

  constructor(funds = '100') {
    decideFaucetCredit(this.payer, { entry_id: randomUUID(), currency: 'USD', amount: funds }, this.book);
  }

  snapshot(): string[] {
    return this.refs.map((ref) => this.book.balance(ref).toFixed());
  }

  /** Keeps the hold a decision wrote, as the round does. */
  keep(decision: Decision): Decision {
    const hold = decidedHold(decision);
    if (hold) this.holds.set(hold.id, hold);
    return decision;
  }

  hold(amount: string, walletId: string | null = null, expiresAt = HOUR_LATER, accountId = this.payer): Decision {
    return this.keep(decideHoldCreate(randomUUID(), accountId, { hold_id: randomUUID(), amount, currency: 'USD', wallet_id: walletId, expires_at: expiresAt, description: null },
      { account: facts(accountId), wallets: this.wallets }, this.book, NOW));
  }

  capture(holdId: string, amount: string, final = false, recipient: AccountFacts | null = facts(this.payee), now = NOW, accountId = this.payer): Decision {
    return this.keep(decideHoldCapture(randomUUID(), accountId, {
      hold_id: holdId, capture_id: randomUUID(), transfer_id: randomUUID(), amount, final, recipient_email: 'payee@example.com', note: null,
    }, this.holds.get(holdId) ?? null, { recipient }, this.book, now));
  }

  /** A transfer to the payee from `fromWalletId` (null: the main balance): internal (a book transfer) or to bank details (held in pending). */
  send(amount: string, fromWalletId: string | null, type: 'internal' | 'external' = 'internal'): TransferCreate {
    const recipient = { email: 'payee@example.com', name: 'Payee', bank: { country: 'GB', bank_name: 'Bank', account_number: 'GB00PAYEE', currency: 'USD' } };
    return {
      transfer_id: randomUUID(), type, amount, currency: 'USD', note: null, from_wallet_id: fromWalletId,
      ...(type === 'internal' ? { recipient_email: recipient.email } : { recipient }),
    };
  }

  batch(atomic: boolean, items: TransferCreate[], wallets = this.wallets): Decision {
    return decideTransferBatch(randomUUID(), this.payer, { atomic, items }, () => ({ sender: facts(this.payer), recipient: facts(this.payee), wallets }), this.book, NOW);
  }

  assertInvariants(): void {
    for (const ref of this.refs) if (ref.kind !== 'system') assert.ok(!this.book.balance(ref).isNegative(), ref.code);
    const total = this.refs.reduce((sum, ref) => sum.plus(this.book.balance(ref)), new Money(0));
    assert.ok(total.isZero(), 'the book sums to zero');
    const heldTotal = this.book.balance(held(this.payer, 'USD')).plus(this.book.balance(walletHeld(this.wallet.id, this.payer, 'USD')));
    let left = new Money(0);
    for (const hold of this.holds.values()) {
      const rest = new Money(hold.amount).minus(hold.captured_amount).minus(hold.released_amount);
      assert.ok(!rest.isNegative(), `hold ${hold.id} gave out more than it took`);
      assert.equal(hold.status === 'active', !rest.isZero(), `hold ${hold.id} is ${hold.status} with ${rest.toFixed()} left`);
      left = left.plus(rest);
    }
    assert.equal(heldTotal.toFixed(), left.toFixed(), 'held balances are what active holds have left');
  }
}

/** The payer's main balance, its pending, and its wallet's available and held balances. */
const balancesOf = (world: World) => ({
  main: world.book.balance(available(world.payer, 'USD')).toFixed(), pending: world.book.balance(pending(world.payer, 'USD')).toFixed(),
  wallet: world.book.balance(walletAvailable(world.wallet.id, world.payer, 'USD')).toFixed(), walletHeld: world.book.balance(walletHeld(world.wallet.id, world.payer, 'USD')).toFixed(),
});

const refusal = (decision: Decision) => (decision.outcome.kind === 'refused' ? [decision.outcome.code, decision.outcome.field] : ['accepted']);

describe('ledger decisions on holds and wallet transfers', () => {
  it('refuses a hold in order of precedence, changing nothing', () => {
    const world = new World('10');
    const before = world.snapshot();
    const cases: Array<[string, () => Decision, unknown[]]> = [
      ['no such account', () => decideHoldCreate(randomUUID(), world.payer, { hold_id: randomUUID(), amount: '1', currency: 'USD', wallet_id: null, expires_at: HOUR_LATER, description: null }, { account: null, wallets: world.wallets }, world.book, NOW), ['resource_not_found', null]],
      ['account not active', () => decideHoldCreate(randomUUID(), world.payer, { hold_id: randomUUID(), amount: '1', currency: 'USD', wallet_id: null, expires_at: HOUR_LATER, description: null }, { account: facts(world.payer, 'suspended'), wallets: world.wallets }, world.book, NOW), ['account_not_active', null]],
      ['another account\'s wallet', () => world.hold('1', world.foreign.id), ['wallet_not_found', 'wallet_id']],
      ['no such wallet', () => world.hold('1', randomUUID()), ['wallet_not_found', 'wallet_id']],
      ['expires_at passed', () => world.hold('1', null, NOW.toISOString()), ['invalid_request', 'expires_at']],
      ['more than available', () => world.hold('10.01'), ['insufficient_funds', 'amount']],
      ['more than the wallet holds', () => world.hold('0.01', world.wallet.id), ['insufficient_funds', 'amount']],
    ];
    for (const [name, decide, expected] of cases) {
      const decision = decide();
      assert.deepEqual(refusal(decision), expected, name);
      assert.deepEqual(decision.entries, [], name);
      assert.deepEqual(world.snapshot(), before, name);
    }
  });

  it('refuses a capture or void in order of precedence, changing nothing', () => {
    const world = new World('10');
    const id = decidedHold(world.hold('5'))!.id;
    const before = world.snapshot();
    const cases: Array<[string, () => Decision, unknown[]]> = [
      ['no such hold', () => world.capture(randomUUID(), '1'), ['hold_not_found', 'hold_id']],
      ['another account\'s hold', () => world.capture(id, '1', false, facts(world.payee), NOW, world.payee), ['hold_not_found', 'hold_id']],
      ['past expires_at', () => world.capture(id, '1', false, facts(world.payee), new Date(HOUR_LATER)), ['hold_not_active', 'hold_id']],
      ['more than is left', () => world.capture(id, '5.01'), ['hold_exceeded', 'amount']],
      ['no such recipient', () => world.capture(id, '1', false, null), ['recipient_not_found', 'recipient_email']],
      ['the holder itself', () => world.capture(id, '1', false, facts(world.payer)), ['invalid_request', 'recipient_email']],
      ['a void of another account\'s hold', () => decideHoldVoid(world.payee, world.holds.get(id)!, world.book, NOW), ['hold_not_found', 'hold_id']],
    ];
    for (const [name, decide, expected] of cases) {
      assert.deepEqual(refusal(decide()), expected, name);
      assert.deepEqual(world.snapshot(), before, name);
    }
    world.keep(decideHoldVoid(world.payer, world.holds.get(id)!, world.book, NOW));
    const voided = world.snapshot();
    assert.deepEqual(refusal(world.capture(id, '1')), ['hold_not_active', 'hold_id'], 'a capture after the void');
    assert.deepEqual(refusal(decideHoldVoid(world.payer, world.holds.get(id)!, world.book, NOW)), ['hold_not_active', 'hold_id'], 'a second void');
    const expired = decideHoldExpire(world.payer, world.holds.get(id)!, world.book, NOW);
    assert.deepEqual([expired.outcome.kind, expired.entries.length], ['hold', 0], 'an expiry after the void changes nothing');
    assert.deepEqual(world.snapshot(), voided);
    world.assertInvariants();
  });

  it('refuses a wallet transfer in order of precedence, changing nothing', () => {
    const world = new World('10');
    const before = world.snapshot();
    const move = (from: string, to: string, amount: string, account: AccountFacts | null = facts(world.payer)) => decideWalletTransfer(world.payer, {
      wallet_transfer_id: randomUUID(), from_wallet_id: from, to_wallet_id: to, amount, currency: 'USD', description: null,
    }, { account, wallets: world.wallets }, world.book, NOW);
    const cases: Array<[string, () => Decision, unknown[]]> = [
      ['no such account', () => move('main', world.wallet.id, '1', null), ['resource_not_found', null]],
      ['account not active', () => move('main', world.wallet.id, '1', facts(world.payer, 'pending')), ['account_not_active', null]],
      ['from another account\'s wallet', () => move(world.foreign.id, 'main', '1'), ['wallet_not_found', 'from_wallet_id']],
      ['to no wallet', () => move('main', randomUUID(), '1'), ['wallet_not_found', 'to_wallet_id']],
      ['to itself', () => move(world.wallet.id, world.wallet.id, '1'), ['invalid_request', 'to_wallet_id']],
      ['more than available', () => move('main', world.wallet.id, '10.01'), ['insufficient_funds', 'amount']],
    ];
    for (const [name, decide, expected] of cases) {
      assert.deepEqual(refusal(decide()), expected, name);
      assert.deepEqual(world.snapshot(), before, name);
    }
    assert.deepEqual(refusal(move('main', world.foreign.id, '10')), ['accepted'], 'another account\'s wallet as the destination');
    assert.equal(world.book.balance(walletAvailable(world.foreign.id, world.payee, 'USD')).toFixed(), '10');
  });

  it('refuses a transfer from a wallet in order of precedence, changing nothing; batch items from one wallet count together', () => {
    const world = new World('100');
    decideWalletTransfer(world.payer, { wallet_transfer_id: randomUUID(), from_wallet_id: 'main', to_wallet_id: world.wallet.id, amount: '30', currency: 'USD', description: null },
      { account: facts(world.payer), wallets: world.wallets }, world.book, NOW);
    const closed: WalletRecord = { id: randomUUID(), account_id: world.payer, closed_at: NOW };
    const wallets = new Map([...world.wallets, [closed.id, closed]]);
    const alone = (command: TransferCreate, account = facts(world.payer)) => decideTransferCreate(randomUUID(), command, { sender: account, recipient: facts(world.payee), wallets }, world.book, NOW);
    const before = world.snapshot();
    const cases: Array<[string, () => Decision, unknown[]]> = [
      ['account not active', () => alone(world.send('1', world.wallet.id), facts(world.payer, 'suspended')), ['account_not_active', null]],
      ['another account\'s wallet', () => alone(world.send('1', world.foreign.id)), ['wallet_not_found', 'from_wallet_id']],
      ['a closed wallet', () => alone(world.send('1', closed.id)), ['wallet_not_found', 'from_wallet_id']],
      ['no such wallet', () => alone(world.send('1', randomUUID())), ['wallet_not_found', 'from_wallet_id']],
      ['more than the wallet holds, though the main balance has it', () => alone(world.send('30.01', world.wallet.id)), ['insufficient_funds', 'amount']],
      ['more than the wallet holds, to bank details', () => alone(world.send('30.01', world.wallet.id, 'external')), ['insufficient_funds', 'amount']],
    ];
    for (const [name, decide, expected] of cases) {
      const decision = decide();
      assert.deepEqual(refusal(decision), expected, name);
      assert.deepEqual(world.snapshot(), before, name);
    }
    const atomic = world.batch(true, [world.send('20', world.wallet.id), world.send('20', null), world.send('10.01', world.wallet.id)], wallets);
    assert.deepEqual(atomic.outcome.kind === 'transfer_batch' && atomic.outcome.batch.items.map((i) => [i.status, i.error?.field ?? null]),
      [['not_created', null], ['not_created', null], ['refused', 'transfers[2].amount']], 'the two wallet items exceed it together');
    assert.deepEqual([atomic.parts, world.snapshot()], [[], before], 'an atomic batch refused changes nothing');
    const each = world.batch(false, [world.send('20', world.wallet.id), world.send('10.01', world.wallet.id), world.send('10', world.wallet.id, 'external')], wallets);
    assert.deepEqual(each.outcome.kind === 'transfer_batch' && each.outcome.batch.items.map((i) => i.status), ['created', 'refused', 'created']);
    assert.deepEqual(balancesOf(world), { main: '70', pending: '10', wallet: '0', walletHeld: '0' });
    assert.deepEqual(each.parts!.map((p) => decidedTransfer(p)!.from_wallet_id), [world.wallet.id, world.wallet.id]);
    world.assertInvariants();
  });

  describe('a capture paid through a rail from a hold on a wallet', () => {
    const bank = { email: 'payee@example.com', name: 'Payee', bank: { country: 'US', bank_name: 'Sandbox Bank', account_number: '000123', currency: 'USD' } };
    const LATER = new Date(NOW.getTime() + 60_000);
    /** A hold of 30 on the wallet (funded with 40 of the 100), 12 of it captured to bank details: the transfer executing. */
    const executingCapture = () => {
      const world = new World('100');
      decideWalletTransfer(world.payer, { wallet_transfer_id: randomUUID(), from_wallet_id: 'main', to_wallet_id: world.wallet.id, amount: '40', currency: 'USD', description: null },
        { account: facts(world.payer), wallets: world.wallets }, world.book, NOW);
      const holdId = decidedHold(world.hold('30', world.wallet.id))!.id;
      const captured = world.keep(decideHoldCapture(randomUUID(), world.payer, {
        hold_id: holdId, capture_id: randomUUID(), transfer_id: randomUUID(), amount: '12', final: false, recipient: bank, note: null,
      }, world.holds.get(holdId)!, { recipient: facts(world.payee) }, world.book, NOW));
      const transfer = decidedTransfer(captured)!;
      assert.deepEqual([transfer.status, transfer.from_wallet_id, partnerCommandOf(captured)?.partner], ['executing', world.wallet.id, 'fiat']);
      return { world, transfer };
    };
    const result = (transfer: TransferRecord, outcome: TransferPartnerResult['outcome'], failureCode: string | null): TransferPartnerResult =>
      ({ transfer_id: transfer.id, outcome, partner_payment_id: null, failure_code: failureCode, failure_message: null });

    const ends: Array<[TransferPartnerResult['outcome'], string]> = [['failed', 'partner_declined'], ['rolled_back', 'partner_reversed'], ['failed', 'execution_deadline']];
    for (const [outcome, failureCode] of ends) {
      it(`${outcome} (${failureCode}): the amount goes back to the wallet, with the wallet's balance event`, () => {
        const { world, transfer } = executingCapture();
        assert.deepEqual(balancesOf(world), { main: '60', pending: '12', wallet: '10', walletHeld: '18' });
        const decision = decidePartnerResult(result(transfer, outcome, failureCode), transfer, world.wallets, world.book, LATER);
        assert.deepEqual([decidedTransfer(decision)!.status, decidedTransfer(decision)!.failure_code], [outcome, failureCode]);
        assert.deepEqual(decision.entries.map((e) => e.entry.kind), ['transfer_release']);
        assert.deepEqual(balancesOf(world), { main: '60', pending: '0', wallet: '22', walletHeld: '18' }, 'the main balance is as it was; the wallet has its 12 back');
        const balanceEvents = decision.events.filter((e) => e.type === 'balance.updated').map((e) => e.attributes);
        assert.deepEqual(balanceEvents, [{ available: '60.00', held: '0.00', pending: '0.00' }, { wallet_id: world.wallet.id, available: '22.00', held: '18.00', pending: '0.00' }]);
        world.assertInvariants();
      });
    }

    it('goes back to the main balance when the wallet was closed since: a closed wallet takes no money', () => {
      const { world, transfer } = executingCapture();
      const closed = new Map([[world.wallet.id, { ...world.wallet, closed_at: NOW }]]);
      const decision = decidePartnerResult(result(transfer, 'failed', 'partner_declined'), transfer, closed, world.book, LATER);
      assert.deepEqual(balancesOf(world), { main: '72', pending: '0', wallet: '10', walletHeld: '18' });
      assert.deepEqual(decision.events.filter((e) => e.type === 'balance.updated').length, 1);
      world.assertInvariants();
    });

    it('a late completion holds the amount again from the wallet it went back to', () => {
      const { world, transfer } = executingCapture();
      const failed = decidedTransfer(decidePartnerResult(result(transfer, 'failed', 'partner_error'), transfer, world.wallets, world.book, LATER))!;
      const decision = decidePartnerResult(result(failed, 'completed', null), failed, world.wallets, world.book, LATER);
      assert.deepEqual([decidedTransfer(decision)!.status, lateCompletionOf(decision)!.reheld, lateCompletionOf(decision)!.receivable], ['completed', '12.00', '0.00']);
      assert.deepEqual(balancesOf(world), { main: '60', pending: '0', wallet: '10', walletHeld: '18' });
      assert.equal(world.book.balance(available(world.payee, 'USD')).toFixed(), '12');
      world.assertInvariants();
    });
  });

  it('keeps every invariant through a seeded random walk of holds, captures, voids, expiries, wallet transfers and transfer batches', () => {
    const seed = 20261129;
    const random = prng(seed);
    const world = new World('1000');
    const amount = () => new Money(Math.floor(random() * 5000) + 1).dividedBy(100).toFixed(2);
    const pick = <T>(items: T[]): T | undefined => items[Math.floor(random() * items.length)];
    const batchEnds = new Set<string>();
    for (let step = 0; step < 2000; step++) {
      const ids = [...world.holds.keys()];
      const choice = random();
      let decision: Decision;
      if (choice < 0.3) decision = world.hold(amount(), random() < 0.3 ? world.wallet.id : null);
      else if (choice < 0.6 && ids.length > 0) decision = world.capture(pick(ids)!, amount(), random() < 0.2);
      else if (choice < 0.7 && ids.length > 0) decision = world.keep(decideHoldVoid(world.payer, world.holds.get(pick(ids)!)!, world.book, NOW));
      else if (choice < 0.8 && ids.length > 0) decision = world.keep(decideHoldExpire(world.payer, world.holds.get(pick(ids)!)!, world.book, NOW));
      else if (choice < 0.9) {
        const items = Array.from({ length: 1 + Math.floor(random() * 4) }, () => world.send(amount(), random() < 0.5 ? world.wallet.id : null, random() < 0.3 ? 'external' : 'internal'));
        const before = world.snapshot();
        decision = world.batch(random() < 0.5, items);
        const outcome = decision.outcome.kind === 'transfer_batch' ? decision.outcome.batch : assert.fail('a batch answers a batch');
        batchEnds.add(`${outcome.atomic ? 'atomic' : 'each'} ${outcome.status}`);
        if (outcome.atomic && outcome.status === 'failed') assert.deepEqual(world.snapshot(), before, `seed ${seed} step ${step}: a failed atomic batch changes nothing`);
      } else {
        const sides = ['main', world.wallet.id];
        const from = pick(sides)!;
        decision = decideWalletTransfer(world.payer, {
          wallet_transfer_id: randomUUID(), from_wallet_id: from, to_wallet_id: from === 'main' ? world.wallet.id : 'main', amount: amount(), currency: 'USD', description: null,
        }, { account: facts(world.payer), wallets: world.wallets }, world.book, NOW);
      }
      for (const { entry } of [decision, ...(decision.parts ?? [])].flatMap((d) => d.entries)) {
        assert.ok(entry.postings.reduce((sum, p) => sum.plus(p.amount), new Money(0)).isZero(), `seed ${seed} step ${step}: entry balances`);
      }
      world.assertInvariants();
    }
    assert.ok([...world.holds.values()].some((h) => h.status === 'captured') && [...world.holds.values()].some((h) => h.status === 'voided'), 'the walk reached every end');
    assert.deepEqual([...batchEnds].sort(), ['atomic completed', 'atomic failed', 'each completed', 'each failed', 'each partial'], 'and every end of a batch');
  });
});
