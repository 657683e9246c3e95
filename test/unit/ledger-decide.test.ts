// The ledger's decisions (ledger/commands/transfer-create.ts, faucet-credit.ts, transfer-partner-result.ts) against a BalanceBook built in memory: the refusals of
// transfer.create in order of precedence, then the accepted paths with their final balances, then
// partner results, then a seeded random walk that checks the ledger's invariants after every step.
// Pure: no Postgres, no broker.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { BalanceBook, type LedgerAccountState } from '../../ledger/balances';
import { available, faucetEquity, lateCompletionReceivable, pending, type LedgerAccountRef } from '../../ledger/chart';
import type { AccountFacts } from '../../ledger/commands/facts';
import { decideFaucetCredit } from '../../ledger/commands/faucet-credit';
import { decideTransferCreate, type TransferFacts } from '../../ledger/commands/transfer-create';
import { decidePartnerResult } from '../../ledger/commands/transfer-partner-result';
import type { Decision } from '../../ledger/decision';
import type { BankRecipient, TransferCreate } from '../../ledger/commands/transfer-create';
import type { TransferPartnerResult } from '../../ledger/commands/transfer-partner-result';
import { Money, type Amount, type Currency } from '../../ledger/money';
import { TERMINAL_STATUSES, type TransferRecord, type TransferStatus } from '../../ledger/transfers';
import type { WalletRecord } from '../../ledger/wallets';
import { faucetAnswer, fxExecutionAnswer, paymentView, refusalAnswer, transferAnswer } from '../../src/ledger-client/answers';
import { prng } from '../support/prng';
import { decidedTransfer, lateCompletionOf, partnerCommandOf, transferIsNew, transitionsOf } from '../support/decisions';

/** The answer the API gives for a decision's outcome (src/ledger-client/answers.ts). */
function answer(decision: Decision): { status: number; body: unknown } {
  const { outcome } = decision;
  if (outcome.kind === 'refused') return refusalAnswer(outcome);
  switch (outcome.kind) {
    case 'transfer': return transferAnswer(outcome);
    case 'faucet_credit': return faucetAnswer(outcome);
    case 'fx_execution': return fxExecutionAnswer(outcome);
    case 'payment': return { status: 201, body: paymentView(outcome.payment) }; // as the payment routes answer (payment-submission.ts)
    case 'reconciliation_adjustment': return { status: 200, body: outcome }; // finance answers with the exception (reconciliation/run-exceptions.ts)
    case 'wallet_transfer': return { status: 201, body: outcome.wallet_transfer }; // src/wallets/routes.ts
    case 'hold': return { status: outcome.created ? 201 : 200, body: outcome.hold }; // src/holds/routes.ts
    case 'transfer_batch': return { status: 201, body: outcome.batch }; // src/transfer-batches/routes.ts
  }
}

const NOW = new Date('2026-11-22T12:00:00.000Z');
/** The wallets a partner result may give money back to: none, these transfers come from the main balance. */
const MAIN_ONLY = new Map<string, WalletRecord>();
const LATER = new Date('2026-11-22T12:00:05.000Z');

// ---------------------------------------------------------------------------------------------
// A small in-memory ledger: every ledger account of some accounts in some currencies, funded
// only through faucet credits, so the book always balances.

class Ledger {
  readonly refs: LedgerAccountRef[];
  readonly book: BalanceBook;
  /** What the faucet has credited, per currency: the only way customer money comes to exist. */
  readonly credited = new Map<Currency, Amount>();

  constructor(readonly accountIds: string[], readonly currencies: Currency[]) {
    this.refs = currencies.flatMap((currency) => [
      faucetEquity(currency), lateCompletionReceivable(currency),
      ...accountIds.flatMap((id) => [available(id, currency), pending(id, currency)]),
    ]);
    const states: LedgerAccountState[] = this.refs.map((ref) => ({ id: randomUUID(), ref, balance: new Money(0) }));
    this.book = new BalanceBook(states);
    for (const currency of currencies) this.credited.set(currency, new Money(0));
  }

  fund(accountId: string, currency: Currency, amount: string): Decision {
    const decision = decideFaucetCredit(accountId, { entry_id: randomUUID(), currency, amount }, this.book);
    this.credited.set(currency, this.credited.get(currency)!.plus(amount));
    return decision;
  }

  balance(ref: LedgerAccountRef): string {
    return this.book.balance(ref).toFixed();
  }

  /** Every balance by ledger account code, for "nothing changed" checks. */
  snapshot(): Record<string, string> {
    return Object.fromEntries(this.refs.map((ref) => [ref.code, this.balance(ref)]));
  }

  sum(currency: Currency, kinds: Array<LedgerAccountRef['kind']>): Amount {
    return this.refs
      .filter((ref) => ref.currency === currency && kinds.includes(ref.kind))
      .reduce((total, ref) => total.plus(this.book.balance(ref)), new Money(0));
  }

  /**
   * The ledger-wide invariants, asserted after every decision: no customer balance below zero;
   * all balances of a currency sum to zero; customer money equals what the faucet credited,
   * which equals minus the faucet equity.
   */
  assertInvariants(): void {
    for (const ref of this.refs) {
      if (ref.kind !== 'system') assert.ok(!this.book.balance(ref).isNegative(), `${ref.code} is ${this.balance(ref)}`);
    }
    for (const currency of this.currencies) {
      const credited = this.credited.get(currency)!;
      assert.ok(this.sum(currency, ['available', 'pending', 'system']).isZero(), `${currency}: the book does not sum to zero`);
      // Customer money comes from the faucet, and from the partner's late completions the senders no
      // longer covered (owed through the receivable, whose balance is that debt, negated).
      const owed = this.book.balance(lateCompletionReceivable(currency)).negated();
      assert.equal(this.sum(currency, ['available', 'pending']).toFixed(), credited.plus(owed).toFixed(), `${currency}: customer money ≠ faucet credits + late debts`);
      assert.equal(this.book.balance(faucetEquity(currency)).negated().toFixed(), credited.toFixed(), `${currency}: faucet equity ≠ -credits`);
    }
  }
}

/** Every entry sums to zero per currency, and each applied posting reports the balance it left. */
function assertEntriesBalance(decision: Decision, book: BalanceBook): void {
  for (const { entry, postings } of decision.entries) {
    const totals = new Map<Currency, Amount>();
    for (const posting of entry.postings) {
      totals.set(posting.account.currency, (totals.get(posting.account.currency) ?? new Money(0)).plus(posting.amount));
    }
    for (const [currency, total] of totals) assert.ok(total.isZero(), `entry ${entry.kind} does not balance in ${currency}: ${total.toFixed()}`);
    assert.equal(postings.length, entry.postings.length);
    postings.forEach((applied, i) => assert.ok(applied.amount.isEqualTo(entry.postings[i].amount)));
  }
  // Read back: with one entry per decision, each posting's balance_after is the book's balance now.
  if (decision.entries.length === 1) {
    for (const applied of decision.entries[0].postings) {
      assert.ok(applied.balanceAfter.isEqualTo(book.balance(applied.ref)), `${applied.ref.code} balance_after`);
    }
  }
}

function assertNothingHappened(decision: Decision): void {
  assert.deepEqual(decision.entries, []);
  assert.deepEqual(decision.events, []);
  assert.deepEqual(transitionsOf(decision), []);
  assert.equal(decidedTransfer(decision), null);
  assert.equal(transferIsNew(decision), false);
  assert.equal(partnerCommandOf(decision), null);
}

const facts = (id: string, kybStatus: string, hasVibans: boolean, hasChainWallet: boolean): AccountFacts => ({ id, kybStatus, hasVibans, hasChainWallet });

function internal(amount: string, currency: Currency, recipientEmail = 'recipient@example.com'): TransferCreate {
  return { transfer_id: randomUUID(), type: 'internal', amount, currency, recipient_email: recipientEmail, note: null };
}

const BANK: BankRecipient = {
  email: 'recipient@example.com', name: 'Recipient Ltd',
  bank: { country: 'DE', bank_name: 'Sandbox Bank', account_number: 'DE89370400440532013000', currency: 'USD' },
};

function external(amount: string, currency: Currency): TransferCreate {
  return { transfer_id: randomUUID(), type: 'external', amount, currency, recipient: { ...BANK, bank: { ...BANK.bank, currency } }, note: 'invoice 42' };
}

function result(transfer: TransferRecord, outcome: TransferPartnerResult['outcome'], failureCode: string | null = null): TransferPartnerResult {
  return {
    transfer_id: transfer.id, outcome, partner_payment_id: `fiat_${transfer.id.slice(0, 8)}`,
    failure_code: failureCode, failure_message: failureCode ? `partner said ${failureCode}` : null,
  };
}

// ---------------------------------------------------------------------------------------------

describe('ledger decide: transfer.create refusals, in order of precedence', () => {
  const SENDER = randomUUID();
  const RECIPIENT = randomUUID();
  const sender = {
    missing: null,
    kybPending: facts(SENDER, 'pending', true, false),
    noWallet: facts(SENDER, 'active', true, false),
    ready: facts(SENDER, 'active', true, true),
  };
  const recipient = {
    missing: null,
    sender: sender.ready,
    phantom: facts(RECIPIENT, 'active', false, false),
    bankOnly: facts(RECIPIENT, 'active', true, false),
    ready: facts(RECIPIENT, 'active', true, true),
  };

  // Each row also breaks every later rule it can (the amount is always above the 100.00 the
  // sender holds), so the row's code is the one that takes precedence.
  const table: Array<[why: string, command: TransferCreate, facts: TransferFacts, status: number, code: string, details: string | null]> = [
    ['no sending account', internal('1000', 'USDC'), { sender: sender.missing, recipient: recipient.missing }, 404, 'resource_not_found', null],
    ['KYB not active', internal('1000', 'USDC'), { sender: sender.kybPending, recipient: recipient.missing }, 403, 'account_not_active', null],
    ['stablecoin without a sender chain wallet', internal('1000', 'USDC'), { sender: sender.noWallet, recipient: recipient.missing }, 422, 'sender_no_chain_wallet', 'currency'],
    ['internal: no account under recipient_email', internal('1000', 'USDC'), { sender: sender.ready, recipient: recipient.missing }, 422, 'recipient_not_found', 'recipient_email'],
    ['internal: the recipient is the sender', internal('1000', 'USDC'), { sender: sender.ready, recipient: recipient.sender }, 400, 'invalid_request', 'recipient_email'],
    ['internal: phantom recipient (no vIBANs, no wallet)', internal('1000', 'USDC'), { sender: sender.ready, recipient: recipient.phantom }, 422, 'phantom_recipient', 'recipient_email'],
    ['internal: stablecoin to a recipient without a chain wallet', internal('1000', 'USDC'), { sender: sender.ready, recipient: recipient.bankOnly }, 422, 'phantom_recipient', 'recipient_email'],
    ['external: bank details match no sandbox account', external('1000', 'USD'), { sender: sender.ready, recipient: recipient.missing }, 400, 'external_send_blocked', 'recipient.bank.account_number'],
    ['external: the bank details are the sender\'s own', external('1000', 'USD'), { sender: sender.ready, recipient: recipient.sender }, 400, 'invalid_request', 'recipient.bank.account_number'],
    ['internal: insufficient funds', internal('1000', 'USD'), { sender: sender.ready, recipient: recipient.ready }, 422, 'insufficient_funds', 'amount'],
    ['external: insufficient funds', external('1000', 'USD'), { sender: sender.ready, recipient: recipient.ready }, 422, 'insufficient_funds', 'amount'],
    ['insufficient by one cent', internal('100.01', 'USD'), { sender: sender.ready, recipient: recipient.ready }, 422, 'insufficient_funds', 'amount'],
    ['insufficient by one micro-unit', internal('100.000001', 'USDC'), { sender: sender.ready, recipient: recipient.ready }, 422, 'insufficient_funds', 'amount'],
    ['held (pending) funds cannot be spent again', internal('100.01', 'USD'), { sender: sender.ready, recipient: recipient.ready }, 422, 'insufficient_funds', 'amount'],
  ];

  for (const [why, command, given, status, code, details] of table) {
    it(`${why} → ${status} ${code}`, () => {
      const ledger = new Ledger([SENDER, RECIPIENT], ['USD', 'USDC']);
      ledger.fund(SENDER, 'USD', '100.00');
      ledger.fund(SENDER, 'USDC', '100.000000');
      if (why.startsWith('held')) {
        // 50.00 of the sender's money is on hold: available 100.00, pending 50.00.
        ledger.fund(SENDER, 'USD', '50.00');
        decideTransferCreate(randomUUID(), external('50', 'USD'), { sender: sender.ready, recipient: recipient.ready }, ledger.book, NOW);
        assert.equal(ledger.balance(pending(SENDER, 'USD')), '50');
      }
      const before = ledger.snapshot();

      const decision = decideTransferCreate(randomUUID(), command, given, ledger.book, NOW);

      assert.equal(answer(decision).status, status);
      const body = answer(decision).body as { success: boolean; error: string; message: string; details: string | null };
      assert.equal(body.success, false);
      assert.equal(body.error, code);
      assert.equal(body.details, details);
      assert.ok(body.message.length > 0);
      assertNothingHappened(decision);
      assert.deepEqual(ledger.snapshot(), before);
      ledger.assertInvariants();
    });
  }
});

describe('ledger decide: transfer.create accepted', () => {
  const SENDER = randomUUID();
  const RECIPIENT = randomUUID();
  const sender = facts(SENDER, 'active', true, true);
  const recipient = facts(RECIPIENT, 'active', true, true);
  let ledger: Ledger;
  beforeEach(() => {
    ledger = new Ledger([SENDER, RECIPIENT], ['USD', 'USDC']);
    ledger.fund(SENDER, 'USD', '100.00');
    ledger.fund(SENDER, 'USDC', '20.000000');
  });

  it('internal fiat is a book transfer, completed at once', () => {
    const command = internal('40.5', 'USD');
    const commandId = randomUUID();
    const decision = decideTransferCreate(commandId, command, { sender, recipient }, ledger.book, NOW);

    assert.equal(answer(decision).status, 201);
    const transfer = decidedTransfer(decision)!;
    assert.equal(transferIsNew(decision), true);
    assert.equal(transfer.id, command.transfer_id);
    assert.equal(transfer.command_id, commandId);
    assert.equal(transfer.status, 'completed');
    assert.equal(transfer.partner, 'book');
    assert.match(transfer.partner_payment_id!, /^book_[0-9a-f]{32}$/);
    assert.equal(transfer.partner_payment_id, `book_${decision.entries[0].entry.id.replace(/-/g, '')}`);
    assert.deepEqual(transfer.completed_at, NOW);
    assert.equal(transfer.recipient_account_id, RECIPIENT);
    assert.deepEqual(transfer.recipient, { email: 'recipient@example.com' });
    const body = answer(decision).body as Record<string, unknown>;
    assert.equal(body.status, 'completed');
    assert.equal(body.amount, '40.50');
    assert.equal(body.estimated_arrival, 'instant');
    assert.equal(body.completed_at, NOW.toISOString());
    assert.equal(body.failure, null);

    assert.deepEqual(transitionsOf(decision).map((t) => [t.from, t.to]), [[null, 'pending'], ['pending', 'quoting'], ['quoting', 'executing'], ['executing', 'completed']]);
    assert.ok(transitionsOf(decision).every((t) => t.transferId === transfer.id && t.at === NOW));
    assert.deepEqual(decision.events.map((e) => [e.type, e.accountId]), [
      ['transfer.pending', SENDER], ['transfer.executing', SENDER], ['transfer.completed', SENDER],
      ['balance.updated', SENDER], ['balance.updated', RECIPIENT],
    ]);
    assert.deepEqual(decision.events[3].attributes, { available: '59.50', held: '0.00', pending: '0.00' });
    assert.deepEqual(decision.events[4].attributes, { available: '40.50', held: '0.00', pending: '0.00' });
    assert.equal(decision.events[4].amount, '40.50');
    assert.equal(partnerCommandOf(decision), null);

    assert.equal(decision.entries.length, 1);
    assert.equal(decision.entries[0].entry.kind, 'internal_transfer');
    assert.equal(decision.entries[0].entry.transferId, transfer.id);
    assertEntriesBalance(decision, ledger.book);

    // Final balances.
    assert.equal(ledger.balance(available(SENDER, 'USD')), '59.5');
    assert.equal(ledger.balance(pending(SENDER, 'USD')), '0');
    assert.equal(ledger.balance(available(RECIPIENT, 'USD')), '40.5');
    assert.equal(ledger.balance(pending(RECIPIENT, 'USD')), '0');
    assert.equal(ledger.balance(faucetEquity('USD')), '-100');
    ledger.assertInvariants();
  });

  it('internal fiat of the whole available balance leaves exactly zero', () => {
    const decision = decideTransferCreate(randomUUID(), internal('100', 'USD'), { sender, recipient }, ledger.book, NOW);
    assert.equal(answer(decision).status, 201);
    assert.equal(ledger.balance(available(SENDER, 'USD')), '0');
    assert.equal(ledger.balance(available(RECIPIENT, 'USD')), '100');
    ledger.assertInvariants();
  });

  it('external fiat holds the amount (available → pending) and instructs the fiat rail', () => {
    const command = external('40', 'USD');
    const decision = decideTransferCreate(randomUUID(), command, { sender, recipient }, ledger.book, NOW);

    assert.equal(answer(decision).status, 201);
    const transfer = decidedTransfer(decision)!;
    assert.equal(transfer.status, 'executing');
    assert.equal(transfer.type, 'external');
    assert.equal(transfer.partner, 'fiat');
    assert.equal(transfer.partner_payment_id, null);
    assert.equal(transfer.completed_at, null);
    assert.equal(transfer.estimated_arrival, 'within a minute');
    assert.deepEqual(transfer.recipient, command.recipient);
    assert.deepEqual(transitionsOf(decision).map((t) => [t.from, t.to]), [[null, 'pending'], ['pending', 'quoting'], ['quoting', 'executing']]);
    assert.deepEqual(decision.events.map((e) => e.type), ['transfer.pending', 'transfer.executing', 'balance.updated']);
    assert.deepEqual(decision.events[2].attributes, { available: '60.00', held: '0.00', pending: '40.00' });
    assert.equal(decision.events[2].amount, '100.00');
    assert.deepEqual(partnerCommandOf(decision), {
      partner: 'fiat', accountId: SENDER, type: 'transfer.execute',
      payload: { transfer_id: transfer.id, amount: '40.00', currency: 'USD', attempt: 0, beneficiary: { ...command.recipient, account_id: RECIPIENT }, scenario: null },
    });
    assert.equal(decision.entries[0].entry.kind, 'transfer_hold');
    assertEntriesBalance(decision, ledger.book);

    assert.equal(ledger.balance(available(SENDER, 'USD')), '60');
    assert.equal(ledger.balance(pending(SENDER, 'USD')), '40');
    assert.equal(ledger.balance(available(RECIPIENT, 'USD')), '0');
    ledger.assertInvariants();
  });

  it('internal USDC holds the amount and instructs the chain rail', () => {
    const decision = decideTransferCreate(randomUUID(), internal('12.5', 'USDC'), { sender, recipient }, ledger.book, NOW);

    assert.equal(answer(decision).status, 201);
    assert.equal(decidedTransfer(decision)!.status, 'executing');
    assert.equal(decidedTransfer(decision)!.partner, 'chain');
    assert.equal((answer(decision).body as Record<string, unknown>).amount, '12.500000');
    assert.equal(partnerCommandOf(decision)!.partner, 'chain');
    assert.equal(partnerCommandOf(decision)!.payload.amount, '12.500000');
    assert.equal(partnerCommandOf(decision)!.payload.currency, 'USDC');
    assertEntriesBalance(decision, ledger.book);

    assert.equal(ledger.balance(available(SENDER, 'USDC')), '7.5');
    assert.equal(ledger.balance(pending(SENDER, 'USDC')), '12.5');
    assert.equal(ledger.balance(available(RECIPIENT, 'USDC')), '0');
    assert.equal(ledger.balance(available(SENDER, 'USD')), '100'); // other currencies untouched
    ledger.assertInvariants();
  });

  it('faucet credit: faucet equity → available, with a balance.updated event', () => {
    const decision = ledger.fund(RECIPIENT, 'USD', '0.01');
    assert.equal(answer(decision).status, 201);
    assert.deepEqual((answer(decision).body as { balance: unknown }).balance, { currency: 'USD', available: '0.01', pending: '0.00' });
    assert.equal(decision.entries[0].entry.kind, 'faucet_credit');
    assert.deepEqual(decision.events.map((e) => [e.type, e.accountId]), [['balance.updated', RECIPIENT]]);
    assertEntriesBalance(decision, ledger.book);
    assert.equal(ledger.balance(faucetEquity('USD')), '-100.01');
    ledger.assertInvariants();
  });
});

describe('ledger decide: partner results on an executing transfer', () => {
  const SENDER = randomUUID();
  const RECIPIENT = randomUUID();
  const sender = facts(SENDER, 'active', true, true);
  const recipient = facts(RECIPIENT, 'active', true, true);
  let ledger: Ledger;
  let executing: TransferRecord;
  beforeEach(() => {
    ledger = new Ledger([SENDER, RECIPIENT], ['USD']);
    ledger.fund(SENDER, 'USD', '100.00');
    executing = decidedTransfer(decideTransferCreate(randomUUID(), external('40', 'USD'), { sender, recipient }, ledger.book, NOW))!;
    assert.equal(executing.status, 'executing');
  });

  it('completed: the hold settles to the recipient', () => {
    const frozen = structuredClone(executing);
    const decision = decidePartnerResult(result(executing, 'completed'), executing, MAIN_ONLY, ledger.book, LATER);

    assert.equal(answer(decision).status, 200);
    const transfer = decidedTransfer(decision)!;
    assert.equal(transferIsNew(decision), false);
    assert.equal(transfer.status, 'completed');
    assert.deepEqual(transfer.completed_at, LATER);
    assert.deepEqual(transfer.updated_at, LATER);
    assert.equal(transfer.partner_payment_id, `fiat_${executing.id.slice(0, 8)}`);
    assert.equal(transfer.failure_code, null);
    assert.deepEqual(executing, frozen, 'the current record is not mutated');
    assert.deepEqual(transitionsOf(decision).map((t) => [t.from, t.to]), [['executing', 'completed']]);
    assert.deepEqual(decision.events.map((e) => [e.type, e.accountId]), [
      ['transfer.completed', SENDER], ['balance.updated', SENDER], ['balance.updated', RECIPIENT],
    ]);
    assert.equal(decision.entries[0].entry.kind, 'transfer_settle');
    assertEntriesBalance(decision, ledger.book);

    assert.equal(ledger.balance(available(SENDER, 'USD')), '60');
    assert.equal(ledger.balance(pending(SENDER, 'USD')), '0');
    assert.equal(ledger.balance(available(RECIPIENT, 'USD')), '40');
    ledger.assertInvariants();
  });

  const releases: Array<[outcome: 'failed' | 'rolled_back', failureCode: string | null, expectedCode: string]> = [
    ['failed', 'partner_declined', 'partner_declined'],
    ['failed', null, 'partner_error'],
    ['rolled_back', 'partner_reversed', 'partner_reversed'],
    ['rolled_back', null, 'partner_reversed'],
  ];
  for (const [outcome, failureCode, expectedCode] of releases) {
    it(`${outcome} (${failureCode ?? 'no code given'}): the hold goes back to available, failure_code ${expectedCode}`, () => {
      const decision = decidePartnerResult(result(executing, outcome, failureCode), executing, MAIN_ONLY, ledger.book, LATER);

      assert.equal(answer(decision).status, 200);
      const transfer = decidedTransfer(decision)!;
      assert.equal(transfer.status, outcome);
      assert.equal(transfer.failure_code, expectedCode);
      assert.equal(transfer.completed_at, null);
      assert.deepEqual((answer(decision).body as { failure: unknown }).failure, { code: expectedCode, message: failureCode ? `partner said ${failureCode}` : null });
      assert.deepEqual(transitionsOf(decision).map((t) => [t.from, t.to]), [['executing', outcome]]);
      assert.deepEqual(decision.events.map((e) => e.type), [`transfer.${outcome}`, 'balance.updated']);
      assert.deepEqual(decision.events[1].attributes, { available: '100.00', held: '0.00', pending: '0.00' });
      assert.equal(decision.entries[0].entry.kind, 'transfer_release');
      assertEntriesBalance(decision, ledger.book);

      assert.equal(ledger.balance(available(SENDER, 'USD')), '100');
      assert.equal(ledger.balance(pending(SENDER, 'USD')), '0');
      assert.equal(ledger.balance(available(RECIPIENT, 'USD')), '0');
      ledger.assertInvariants();
    });
  }

  for (const terminal of TERMINAL_STATUSES) {
    for (const outcome of ['completed', 'failed', 'rolled_back'] as const) {
      // The partner paid a transfer the ledger failed: that one is completed late (below).
      if (terminal === 'failed' && outcome === 'completed') continue;
      it(`a ${outcome} result for a transfer already ${terminal} changes nothing`, () => {
        const finished: TransferRecord = { ...executing, status: terminal };
        const before = ledger.snapshot();
        const decision = decidePartnerResult(result(finished, outcome), finished, MAIN_ONLY, ledger.book, LATER);
        assert.equal(answer(decision).status, 200);
        assert.equal((answer(decision).body as { status: TransferStatus }).status, terminal);
        assertNothingHappened(decision);
        assert.deepEqual(ledger.snapshot(), before);
        ledger.assertInvariants();
      });
    }
  }

  /** The transfer failed by the ledger, its hold released: what a late completion finds. */
  const failedAndReleased = (): TransferRecord => {
    const failed = decidedTransfer(decidePartnerResult(result(executing, 'failed', 'partner_unavailable'), executing, MAIN_ONLY, ledger.book, LATER))!;
    assert.equal(failed.status, 'failed');
    assert.equal(ledger.balance(available(SENDER, 'USD')), '100');
    return failed;
  };

  it('a completed result for a transfer already failed completes it late: held again from available, settled, the failure kept', () => {
    const failed = failedAndReleased();
    const decision = decidePartnerResult(result(failed, 'completed'), failed, MAIN_ONLY, ledger.book, LATER);
    const transfer = decidedTransfer(decision)!;
    assert.equal(transfer.status, 'completed');
    assert.equal(transfer.failure_code, null);
    assert.deepEqual(transfer.late_completion, { failure_code: 'partner_unavailable', failure_message: failed.failure_message, failed_at: LATER.toISOString(), receivable: '0.00' });
    assert.deepEqual(decision.entries.map((e) => e.entry.kind), ['transfer_rehold', 'transfer_settle']);
    assert.deepEqual(transitionsOf(decision).map((t) => [t.from, t.to]), [['failed', 'completed']]);
    assert.deepEqual([lateCompletionOf(decision)!.reheld, lateCompletionOf(decision)!.receivable], ['40.00', '0.00']);
    assertEntriesBalance(decision, ledger.book);
    assert.equal(ledger.balance(available(SENDER, 'USD')), '60');
    assert.equal(ledger.balance(pending(SENDER, 'USD')), '0');
    assert.equal(ledger.balance(available(RECIPIENT, 'USD')), '40');
    ledger.assertInvariants();
  });

  it('a late completion the sender can no longer cover takes what is there and owes the rest, never a negative balance', () => {
    const failed = failedAndReleased();
    // The released money is spent elsewhere before the partner's word arrives: 75 of 100.
    const spent = decideTransferCreate(randomUUID(), internal('75.00', 'USD'), { sender, recipient }, ledger.book, LATER);
    assert.equal(answer(spent).status, 201);
    const decision = decidePartnerResult(result(failed, 'completed'), failed, MAIN_ONLY, ledger.book, LATER);
    assert.equal(decidedTransfer(decision)!.status, 'completed');
    assert.equal(decidedTransfer(decision)!.late_completion!.receivable, '15.00', '40 paid by the partner, 25 left to hold: 15 owed');
    const rehold = decision.entries.find((e) => e.entry.kind === 'transfer_rehold')!.entry;
    const late = lateCompletionOf(decision)!;
    assert.deepEqual([late.transferId, late.currency, late.amount, late.reheld, late.receivable, late.entryId], [failed.id, 'USD', '40.00', '25.00', '15.00', rehold.id],
      'finance is told: the transfer, what was held again and what is owed');
    assertEntriesBalance(decision, ledger.book);
    assert.equal(ledger.balance(available(SENDER, 'USD')), '0');
    assert.equal(ledger.balance(available(RECIPIENT, 'USD')), '115');
    ledger.assertInvariants();
  });

  it('a result for an unknown transfer → 404 transfer_not_found, nothing else', () => {
    const before = ledger.snapshot();
    const decision = decidePartnerResult(result(executing, 'completed'), null, MAIN_ONLY, ledger.book, LATER);
    assert.equal(answer(decision).status, 404);
    assert.equal((answer(decision).body as { error: string }).error, 'transfer_not_found');
    assertNothingHappened(decision);
    assert.deepEqual(ledger.snapshot(), before);
  });
});

// ---------------------------------------------------------------------------------------------

describe('ledger decide: a seeded random walk keeps the invariants', () => {
  const SEED = 20261122;
  const STEPS = 1_000;
  const ACCOUNTS = 10;
  const SCALE: Record<'USD' | 'USDC', number> = { USD: 2, USDC: 6 };

  it(`${STEPS} random commands over ${ACCOUNTS} accounts (seed ${SEED})`, () => {
    const random = prng(SEED);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
    /** A random positive amount of at most `maxMinorUnits` minor units, as the route would send it. */
    const amountOf = (currency: 'USD' | 'USDC', maxMinorUnits: number): string =>
      new Money(1 + Math.floor(random() * maxMinorUnits)).shiftedBy(-SCALE[currency]).toFixed();

    const ids = Array.from({ length: ACCOUNTS }, () => randomUUID());
    const accountFacts = new Map(ids.map((id) => [id, facts(id, 'active', true, true)]));
    const ledger = new Ledger(ids, ['USD', 'USDC']);
    const executing: TransferRecord[] = [];
    const finished: TransferRecord[] = [];
    const counts: Record<string, number> = {};
    const count = (what: string) => { counts[what] = (counts[what] ?? 0) + 1; };

    for (let step = 0; step < STEPS; step += 1) {
      const currency = pick(['USD', 'USDC'] as const);
      const roll = random();
      let decision: Decision;
      if (roll < 0.2) {
        decision = ledger.fund(pick(ids), currency, amountOf(currency, 50_000 * 10 ** (SCALE[currency] - 2)));
        count('faucet');
      } else if (roll < 0.5) {
        const command = internal(amountOf(currency, 30_000 * 10 ** (SCALE[currency] - 2)), currency);
        decision = decideTransferCreate(randomUUID(), command, { sender: accountFacts.get(pick(ids))!, recipient: accountFacts.get(pick(ids))! }, ledger.book, NOW);
        count(`internal ${currency} ${answer(decision).status}`);
      } else if (roll < 0.75) {
        const command = external(amountOf('USD', 30_000), 'USD');
        decision = decideTransferCreate(randomUUID(), command, { sender: accountFacts.get(pick(ids))!, recipient: accountFacts.get(pick(ids))! }, ledger.book, NOW);
        count(`external USD ${answer(decision).status}`);
      } else if (roll < 0.95 && executing.length > 0) {
        const index = Math.floor(random() * executing.length);
        const [current] = executing.splice(index, 1);
        decision = decidePartnerResult(result(current, pick(['completed', 'failed', 'rolled_back'] as const)), current, MAIN_ONLY, ledger.book, LATER);
        count(`result ${decidedTransfer(decision)!.status}`);
      } else if (finished.length > 0) {
        const current = pick(finished);
        // A completion of a failed transfer is the late completion, tested on its own above.
        const outcomes = current.status === 'failed' ? (['failed', 'rolled_back'] as const) : (['completed', 'failed', 'rolled_back'] as const);
        decision = decidePartnerResult(result(current, pick(outcomes)), current, MAIN_ONLY, ledger.book, LATER);
        assertNothingHappened(decision);
        count('late result');
      } else {
        continue;
      }

      // Refusals change nothing; the only refusals here are rules, never a crash.
      if (answer(decision).status >= 400) {
        assertNothingHappened(decision);
        assert.ok(['insufficient_funds', 'invalid_request'].includes((answer(decision).body as { error: string }).error));
      }
      assertEntriesBalance(decision, ledger.book);
      const decided = decidedTransfer(decision);
      if (decided) (TERMINAL_STATUSES.includes(decided.status) ? finished : executing).push(decided);
      ledger.assertInvariants();
    }

    // Every path was walked, and refusals happened too.
    for (const what of ['faucet', 'internal USD 201', 'internal USDC 201', 'internal USD 422', 'external USD 201', 'external USD 422',
      'result completed', 'result failed', 'result rolled_back', 'late result']) {
      assert.ok((counts[what] ?? 0) > 0, `the walk never hit "${what}": ${JSON.stringify(counts)}`);
    }

    // The end state: customer money (available + pending) == faucet credits == -(faucet equity).
    for (const currency of ['USD', 'USDC'] as const) {
      const customers = ledger.sum(currency, ['available', 'pending']);
      assert.equal(customers.toFixed(), ledger.credited.get(currency)!.toFixed());
      assert.equal(customers.toFixed(), ledger.book.balance(faucetEquity(currency)).negated().toFixed());
      // What is pending is exactly what the still-executing transfers hold.
      const held = executing.filter((t) => t.currency === currency).reduce((total, t) => total.plus(t.amount), new Money(0));
      assert.equal(ledger.sum(currency, ['pending']).toFixed(), held.toFixed());
    }
  });
});
