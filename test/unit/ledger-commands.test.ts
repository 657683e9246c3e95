// The ledger's command table (ledger/commands/index.ts): every kind of command on ledger.commands
// has its module and its row, every module in the folder is in the table, and a module answers
// what the round asks of it without Postgres. And a hold's one rule in time (holdStatus), and the
// metadata commands (transfer.update, hold.update) as tables of what they decide, screened first;
// then hold.increment: what it moves, what a capture and a void find after it, its refusals.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { BalanceBook } from '../../ledger/balances';
import { available, held, pending, walletAvailable, walletHeld, type LedgerAccountRef } from '../../ledger/chart';
import { COMMAND_TYPES, commandOf, COMMANDS, parsePayload, type BatchFacts, type CommandType, type Locked } from '../../ledger/commands';
import type { Decision } from '../../ledger/decision';
import { holdStatus, type HoldRecord } from '../../ledger/holds';
import { Money } from '../../ledger/money';
import type { TransferRecord } from '../../ledger/transfers';
import { decidedHold, decidedTransfer, holdIsNew, transferIsNew } from '../support/decisions';

const FOLDER = path.join(__dirname, '..', '..', '..', 'ledger', 'commands');
const ACCOUNT = '3f1e8c2a-5b7d-4c9e-8a1f-2d4b6c8e0a13';


/** The field a parse refused, or null when it took the payload. */
const refusalField = (parsed: { payload: unknown } | { refusal: { field?: string | null } }): string | null => ('refusal' in parsed ? parsed.refusal.field ?? null : null);

describe('ledger commands', () => {
  it('makes every row a module with what the round asks of it, and every module of the folder a row', () => {
    for (const type of COMMAND_TYPES) {
      const command = COMMANDS[type];
      assert.ok(typeof command.parse === 'function' && typeof command.needs === 'function' && typeof command.accounts === 'function' && typeof command.decide === 'function', type);
    }
    const index = fs.readFileSync(path.join(FOLDER, 'index.ts'), 'utf8');
    const modules = fs.readdirSync(FOLDER).filter((f) => f.endsWith('.ts') && !['index.ts', 'command.ts', 'facts.ts'].includes(f));
    for (const file of modules) assert.ok(index.includes(`from './${file.replace(/\.ts$/, '')}'`), `${file} is in the table`);
  });

  it('names what a command needs read, and refuses a capture that names two recipients or none', () => {
    const hold = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
    assert.deepEqual(commandOf('hold.void').needs({ hold_id: hold }, ACCOUNT), { holds: [hold] });
    assert.deepEqual(commandOf('faucet.credit').needs({ currency: 'USD', amount: '1.00' }, ACCOUNT), { sender: true, faucet: 'USD' });
    const batch = commandOf('transfer.batch').needs({ atomic: true, items: [
      { type: 'internal', recipient_email: 'a@example.test', amount: '1.00', currency: 'USD' },
      { type: 'external', recipient: { email: 'b@example.test', name: 'B', bank: { account_number: 'DE001', currency: 'EUR', country: 'DE', bank_name: 'X' } }, amount: '1.00', currency: 'USD', from_wallet_id: hold },
    ] }, ACCOUNT);
    assert.deepEqual(batch, { sender: true, emails: ['a@example.test'], banks: [{ accountNumber: 'DE001', currency: 'EUR' }], wallets: [hold] });
    const both = COMMANDS['hold.capture'].parse({ hold_id: hold, amount: '1.00', final: false, recipient_email: 'a@example.test', recipient: { email: 'a@example.test', bank: { account_number: '1', currency: 'USD' } } });
    assert.ok('refusal' in both && both.refusal.code === 'invalid_request' && both.refusal.field === 'recipient_email');
    assert.ok('payload' in COMMANDS['hold.capture'].parse({ hold_id: hold, amount: '1.00', final: false, recipient_email: 'a@example.test' }));
  });

  it('refuses a reversal of nothing sent straight to the ledger (the API refuses it first), naming amount', () => {
    const ids = { transfer_id: '24b8cad4-a7df-5b1d-aea1-2ad0f0ea70e6', reversal_id: '7c9e6679-7425-40de-944b-e07fc1f90ae7', reason: null };
    for (const amount of ['0.00', '0', '-1.00', '1e2', 1]) {
      const parsed = COMMANDS['transfer.reverse'].parse({ ...ids, amount });
      assert.ok('refusal' in parsed && parsed.refusal.code === 'invalid_request' && parsed.refusal.field === 'amount', `amount ${JSON.stringify(amount)} refused`);
    }
    for (const amount of ['0.01', null]) assert.ok('payload' in COMMANDS['transfer.reverse'].parse({ ...ids, amount }), `amount ${JSON.stringify(amount)} taken`);
  });

  it("a hold is expired from its expires_at on, not a millisecond before, and an ended hold keeps its status", () => {
    const at = new Date('2026-11-28T12:00:00.000Z');
    assert.equal(holdStatus({ status: 'active', expires_at: at }, new Date(at.getTime() - 1)), 'active');
    assert.equal(holdStatus({ status: 'active', expires_at: at }, at), 'expired');
    for (const status of ['captured', 'voided', 'expired'] as const) assert.equal(holdStatus({ status, expires_at: at }, new Date(at.getTime() + 1)), status);
  });
});

describe('metadata commands: transfer.update and hold.update', () => {
  const OTHER = '9b2f6a9e-4c1d-4f7e-8a51-0d3c2b1a0f99';
  const TRANSFER = '24b8cad4-a7df-5b1d-aea1-2ad0f0ea70e6';
  const REVERSAL = '6f1d2c3b-4a59-4e8f-9a7b-1c2d3e4f5a6b';
  const HOLD = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
  const then = new Date('2026-11-28T12:00:00.000Z');
  const now = new Date('2026-11-28T12:00:05.000Z');
  const transfer = { id: TRANSFER, account_id: ACCOUNT, status: 'completed', metadata: { a: '1', b: '2' }, updated_at: then,
    reversals: [{ id: REVERSAL, amount: '1.00', reason: null, status: 'completed', created_at: then.toISOString() }] } as unknown as TransferRecord;
  const hold = { id: HOLD, account_id: ACCOUNT, status: 'voided', metadata: { a: '1' }, updated_at: then } as unknown as HoldRecord;
  const fifty = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, 'v']));

  const decide = (type: CommandType, payload: unknown, accountId = ACCOUNT, records: { transfers?: TransferRecord[]; holds?: HoldRecord[] } = { transfers: [transfer], holds: [hold] }): Decision => {
    const locked = { transfers: new Map((records.transfers ?? []).map((t) => [t.id, t])), holds: new Map((records.holds ?? []).map((h) => [h.id, h])) } as unknown as Locked;
    return commandOf(type).decide({ commandId: 'c', accountId, payload, facts: {} as BatchFacts, locked, book: new BalanceBook([]), now });
  };
  const refusalOf = (decision: Decision) => (decision.outcome.kind === 'refused' ? [decision.outcome.code, decision.outcome.field] : null);

  // [what, type, payload, account, records, the refusal (code, field) or null], in order of precedence.
  const refusals: Array<[string, CommandType, unknown, string, { transfers?: TransferRecord[]; holds?: HoldRecord[] } | undefined, [string, string] ]> = [
    ['an unknown transfer', 'transfer.update', { transfer_id: TRANSFER, reversal_id: null, metadata: { c: '3' } }, ACCOUNT, {}, ['transfer_not_found', 'transfer_id']],
    ['another account\'s transfer', 'transfer.update', { transfer_id: TRANSFER, reversal_id: null, metadata: { c: '3' } }, OTHER, undefined, ['transfer_not_found', 'transfer_id']],
    ['a reversal the transfer does not have', 'transfer.update', { transfer_id: TRANSFER, reversal_id: OTHER, metadata: { c: '3' } }, ACCOUNT, undefined, ['resource_not_found', 'reversal_id']],
    ['a transfer\'s 51st key', 'transfer.update', { transfer_id: TRANSFER, reversal_id: null, metadata: { ...fifty, c: '3' } }, ACCOUNT, { transfers: [{ ...transfer, metadata: {} }] }, ['invalid_request', 'metadata.c']],
    ['an unknown hold', 'hold.update', { hold_id: HOLD, metadata: { c: '3' } }, ACCOUNT, {}, ['hold_not_found', 'hold_id']],
    ['another account\'s hold', 'hold.update', { hold_id: HOLD, metadata: { c: '3' } }, OTHER, undefined, ['hold_not_found', 'hold_id']],
    ['a hold\'s 51st key', 'hold.update', { hold_id: HOLD, metadata: fifty }, ACCOUNT, undefined, ['invalid_request', 'metadata.k49']],
  ];
  for (const [what, type, payload, accountId, records, expected] of refusals) {
    it(`refuses ${what}: ${expected.join(' naming ')}, changing no record`, () => {
      const decision = decide(type, payload, accountId, records);
      assert.deepEqual(refusalOf(decision), expected);
      assert.deepEqual([decidedTransfer(decision), decidedHold(decision), decision.entries, decision.events], [null, null, [], []]);
    });
  }

  it('patches a transfer\'s metadata, a reversal\'s apart from it, and a hold\'s whatever its status: no money moves, no event', () => {
    const own = decide('transfer.update', { transfer_id: TRANSFER, reversal_id: null, metadata: { b: null, c: '3' } });
    assert.deepEqual([decidedTransfer(own)?.metadata, decidedTransfer(own)?.updated_at, transferIsNew(own), own.entries, own.events], [{ a: '1', c: '3' }, now, false, [], []]);
    assert.deepEqual(own.outcome.kind === 'transfer' && own.outcome.created, false);
    const reversal = decide('transfer.update', { transfer_id: TRANSFER, reversal_id: REVERSAL, metadata: { ticket: 'T-1' } });
    assert.deepEqual([decidedTransfer(reversal)?.metadata, decidedTransfer(reversal)?.reversals?.[0].metadata], [{ a: '1', b: '2' }, { ticket: 'T-1' }]);
    const held = decide('hold.update', { hold_id: HOLD, metadata: { a: null, b: '2' } });
    assert.deepEqual([decidedHold(held)?.metadata, decidedHold(held)?.status, holdIsNew(held), held.entries, held.events], [{ b: '2' }, 'voided', false, [], []]);
    assert.deepEqual(transfer.metadata, { a: '1', b: '2' }, 'the locked record itself is left as it was');
  });

  it('is screened before the round: ids, the reversal named, and metadata within its bounds, a batch item\'s by its index', () => {
    // [type, payload, the field refused, or null]
    const table: Array<[CommandType, Record<string, unknown>, string | null]> = [
      ['transfer.update', { transfer_id: TRANSFER, reversal_id: null, metadata: { a: null } }, null],
      ['transfer.update', { transfer_id: TRANSFER, reversal_id: 'not-a-uuid', metadata: {} }, 'reversal_id'],
      ['transfer.update', { transfer_id: TRANSFER, reversal_id: null }, 'metadata'],
      ['hold.update', { hold_id: HOLD, metadata: { ['k'.repeat(41)]: 'v' } }, `metadata.${'k'.repeat(41)}`],
      ['hold.create', { hold_id: HOLD, amount: '1.00', currency: 'USD', wallet_id: null, expires_at: now.toISOString(), description: null, metadata: { a: null } }, 'metadata.a'],
      ['transfer.create', { transfer_id: TRANSFER, type: 'internal', recipient_email: 'a@example.test', amount: '1.00', currency: 'USD', note: null }, null],
      ['transfer.create', { transfer_id: TRANSFER, type: 'internal', recipient_email: 'a@example.test', amount: '1.00', currency: 'USD', note: null, metadata: { a: 1 } }, 'metadata.a'],
      ['transfer.batch', { atomic: true, items: [{ transfer_id: TRANSFER, type: 'internal', recipient_email: 'a@example.test', amount: '1.00', currency: 'USD', note: null, metadata: { a: 'x'.repeat(501) } }] }, 'transfers[0].metadata.a'],
    ];
    for (const [type, payload, field] of table) assert.equal(refusalField(parsePayload(type, ACCOUNT, payload)), field, `${type} ${JSON.stringify(payload).slice(0, 120)}`);
  });
});

describe('hold.increment: an active hold raised by an amount, from the side it holds from', () => {
  const OTHER = '9b2f6a9e-4c1d-4f7e-8a51-0d3c2b1a0f99';
  const PAYEE = '5d0c9a1e-2b3f-4a6d-9c8e-7f1a2b3c4d5e';
  const HOLD = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
  const WALLET = '1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d';
  const then = new Date('2026-11-28T12:00:00.000Z');
  const now = new Date('2026-11-28T12:00:05.000Z');
  const expiresAt = new Date('2026-11-28T13:00:00.000Z');
  /** A hold of 40.00 USD on the main balance, 10.00 of it captured: 30.00 left, all of the main balance's held. */
  const hold = (changed: Partial<HoldRecord> = {}): HoldRecord => ({
    id: HOLD, account_id: ACCOUNT, wallet_id: null, command_id: 'hold-create', status: 'active', currency: 'USD', amount: '40', captured_amount: '10', released_amount: '0',
    description: null, metadata: {}, captures: [], expires_at: expiresAt, created_at: then, updated_at: then, ...changed,
  });
  const REFS: LedgerAccountRef[] = [available(ACCOUNT, 'USD'), held(ACCOUNT, 'USD'), pending(ACCOUNT, 'USD'), walletAvailable(WALLET, ACCOUNT, 'USD'), walletHeld(WALLET, ACCOUNT, 'USD'), available(PAYEE, 'USD'), held(PAYEE, 'USD'), pending(PAYEE, 'USD')];
  /** Main balance: 100.00 available, 30.00 held; the wallet: 20.00 available, 30.00 held (for the same hold put on it). */
  const START = ['100', '30', '0', '20', '30', '0', '0', '0'];
  const newBook = () => new BalanceBook(REFS.map((ref, i) => ({ id: `la-${i}`, ref, balance: new Money(START[i]) })));
  const balances = (book: BalanceBook) => REFS.map((ref) => book.balance(ref).toFixed());
  const payee = { id: PAYEE, kybStatus: 'active', hasVibans: true, hasChainWallet: false };
  const facts = { accountsByEmail: new Map([['payee@example.test', payee]]), accountsByBank: new Map() } as unknown as BatchFacts;

  const decide = (type: CommandType, payload: unknown, current: HoldRecord | null, book: BalanceBook, accountId = ACCOUNT, at = now): Decision => {
    const locked = { holds: new Map(current ? [[current.id, current]] : []) } as unknown as Locked;
    return commandOf(type).decide({ commandId: 'c', accountId, payload, facts, locked, book, now: at });
  };
  const increment = (current: HoldRecord | null, amount: string, book = newBook(), accountId = ACCOUNT, at = now) => decide('hold.increment', { hold_id: HOLD, amount }, current, book, accountId, at);

  it('moves the amount from the main balance\'s available to its held: the hold holds that much more, its captures as they were, one balance.updated', () => {
    const book = newBook();
    const decision = increment(hold(), '12.50', book);
    const raised = decidedHold(decision)!;
    assert.deepEqual([decision.outcome.kind, decision.outcome.kind === 'hold' && decision.outcome.created, holdIsNew(decision)], ['hold', false, false]);
    assert.deepEqual([raised.amount, raised.captured_amount, raised.released_amount, raised.status, raised.updated_at], ['52.5', '10', '0', 'active', now]);
    assert.deepEqual(balances(book), ['87.5', '42.5', '0', '20', '30', '0', '0', '0']);
    assert.deepEqual(decision.entries.map(({ entry }) => [entry.kind, entry.postings.map((p) => [p.account.code, p.amount.toFixed()])]), [
      ['hold_increment', [[available(ACCOUNT, 'USD').code, '-12.5'], [held(ACCOUNT, 'USD').code, '12.5']]],
    ]);
    assert.deepEqual(decision.events.map((e) => [e.type, e.resourceId, e.amount, e.attributes]), [
      ['balance.updated', ACCOUNT, '130.00', { available: '87.50', held: '42.50', pending: '0.00' }],
    ]);
    assert.equal(hold().amount, '40', 'the locked record itself is left as it was');
  });

  it('raises a hold on a wallet from the wallet\'s available, the main balance untouched', () => {
    const book = newBook();
    const decision = increment(hold({ wallet_id: WALLET }), '20.00', book);
    assert.equal(decidedHold(decision)?.amount, '60');
    assert.deepEqual(balances(book), ['100', '30', '0', '0', '50', '0', '0', '0']);
    assert.deepEqual(decision.events.map((e) => [e.type, e.attributes]), [['balance.updated', { wallet_id: WALLET, available: '0.00', held: '50.00', pending: '0.00' }]]);
  });

  it('leaves a capture all of what is left of the new amount, and a void all of it', () => {
    const book = newBook();
    const raised = decidedHold(increment(hold(), '12.50', book))!;
    const capture = (amount: string) => decide('hold.capture', {
      hold_id: HOLD, capture_id: '2c3d4e5f-6a7b-4c8d-9e0f-1a2b3c4d5e6f', transfer_id: '3d4e5f6a-7b8c-4d9e-8f0a-1b2c3d4e5f6a', amount, final: false, recipient_email: 'payee@example.test', note: null,
    }, raised, book);
    assert.deepEqual(capture('42.51').outcome, { kind: 'refused', code: 'hold_exceeded', message: 'only 42.50 USD of the hold is left to capture', field: 'amount' });
    const captured = capture('42.50');
    assert.deepEqual([decidedHold(captured)?.status, decidedHold(captured)?.captured_amount], ['captured', '52.5']);
    assert.deepEqual(balances(book), ['87.5', '0', '0', '20', '30', '42.5', '0', '0']);
    const voidBook = newBook();
    const voided = decide('hold.void', { hold_id: HOLD }, decidedHold(increment(hold(), '12.50', voidBook))!, voidBook);
    assert.deepEqual([decidedHold(voided)?.status, decidedHold(voided)?.released_amount], ['voided', '42.5']);
    assert.deepEqual(balances(voidBook), ['130', '0', '0', '20', '30', '0', '0', '0']);
  });

  // [what, the hold as locked, amount, account, when, the refusal (code, field)], in order of precedence: each
  // row's amount breaks the rules after its own too (past the scale, above what is available), and the earlier rule answers.
  const refusals: Array<[string, HoldRecord | null, string, string, Date, [string, string]]> = [
    ['an unknown hold', null, '1000.005', ACCOUNT, now, ['hold_not_found', 'hold_id']],
    ['another account\'s hold', hold(), '1000.005', OTHER, now, ['hold_not_found', 'hold_id']],
    ['a hold voided', hold({ status: 'voided', released_amount: '30' }), '1000.005', ACCOUNT, now, ['hold_not_active', 'hold_id']],
    ['a hold captured in full', hold({ status: 'captured', captured_amount: '40' }), '1000.005', ACCOUNT, now, ['hold_not_active', 'hold_id']],
    ['a hold at its expires_at, not expired by the ledger yet', hold(), '1000.005', ACCOUNT, expiresAt, ['hold_not_active', 'hold_id']],
    ['an amount past the scale of the hold\'s currency', hold(), '1000.005', ACCOUNT, now, ['invalid_request', 'amount']],
    ['more than the main balance has available', hold(), '100.01', ACCOUNT, now, ['insufficient_funds', 'amount']],
    ['more than the wallet has available, though the main balance has it', hold({ wallet_id: WALLET }), '20.01', ACCOUNT, now, ['insufficient_funds', 'amount']],
  ];
  for (const [what, current, amount, accountId, at, expected] of refusals) {
    it(`refuses ${what}: ${expected.join(' naming ')}, moving nothing and changing no hold`, () => {
      const book = newBook();
      const decision = increment(current, amount, book, accountId, at);
      assert.deepEqual(decision.outcome.kind === 'refused' ? [decision.outcome.code, decision.outcome.field] : decision.outcome.kind, expected);
      assert.deepEqual([decidedHold(decision), decision.entries, decision.events, balances(book)], [null, [], [], START]);
    });
  }

  it('is screened before the round: the hold\'s id, and an amount of decimal text above zero', () => {
    // [payload, the field refused, or null]
    const table: Array<[Record<string, unknown>, string | null]> = [
      [{ hold_id: HOLD, amount: '12.50' }, null],
      [{ hold_id: 'not-a-uuid', amount: '12.50' }, 'hold_id'],
      [{ hold_id: HOLD }, 'amount'],
      [{ hold_id: HOLD, amount: 12.5 }, 'amount'],
      [{ hold_id: HOLD, amount: '1e3' }, 'amount'],
      [{ hold_id: HOLD, amount: '0.00' }, 'amount'],
      [{ hold_id: HOLD, amount: '-1.00' }, 'amount'],
    ];
    for (const [payload, field] of table) assert.equal(refusalField(parsePayload('hold.increment', ACCOUNT, payload)), field, JSON.stringify(payload));
  });
});
