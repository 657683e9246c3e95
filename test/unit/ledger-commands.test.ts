// The ledger's command table (ledger/commands/index.ts): every kind of command on ledger.commands
// has its module and its row, every module in the folder is in the table, and a module answers
// what the round asks of it without Postgres. And a hold's one rule in time (holdStatus).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { COMMANDS } from '../../ledger/commands';
import { holdStatus } from '../../ledger/holds';
import { COMMAND_TYPES } from '../../ledger/messages';

const FOLDER = path.join(__dirname, '..', '..', '..', 'ledger', 'commands');
const ACCOUNT = '3f1e8c2a-5b7d-4c9e-8a1f-2d4b6c8e0a13';

describe('ledger commands', () => {
  it('has a module for every command kind, and every module of the folder in the table', () => {
    assert.deepEqual(Object.keys(COMMANDS).sort(), [...COMMAND_TYPES].sort());
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
    assert.deepEqual(COMMANDS['hold.void'].needs({ hold_id: hold }, ACCOUNT), { holds: [hold] });
    assert.deepEqual(COMMANDS['faucet.credit'].needs({ currency: 'USD', amount: '1.00' }, ACCOUNT), { sender: true, faucet: 'USD' });
    const batch = COMMANDS['transfer.batch'].needs({ atomic: true, items: [
      { type: 'internal', recipient_email: 'a@example.test', amount: '1.00', currency: 'USD' },
      { type: 'external', recipient: { email: 'b@example.test', name: 'B', bank: { account_number: 'DE001', currency: 'EUR', country: 'DE', bank_name: 'X' } }, amount: '1.00', currency: 'USD', from_wallet_id: hold },
    ] }, ACCOUNT);
    assert.deepEqual(batch, { sender: true, emails: ['a@example.test'], banks: [{ accountNumber: 'DE001', currency: 'EUR' }], wallets: [hold] });
    const both = COMMANDS['hold.capture'].parse({ hold_id: hold, amount: '1.00', final: false, recipient_email: 'a@example.test', recipient: { email: 'a@example.test', bank: { account_number: '1', currency: 'USD' } } });
    assert.ok('refusal' in both && both.refusal.code === 'invalid_request' && both.refusal.field === 'recipient_email');
    assert.ok('payload' in COMMANDS['hold.capture'].parse({ hold_id: hold, amount: '1.00', final: false, recipient_email: 'a@example.test' }));
  });

  it("a hold is expired from its expires_at on, not a millisecond before, and an ended hold keeps its status", () => {
    const at = new Date('2026-11-28T12:00:00.000Z');
    assert.equal(holdStatus({ status: 'active', expires_at: at }, new Date(at.getTime() - 1)), 'active');
    assert.equal(holdStatus({ status: 'active', expires_at: at }, at), 'expired');
    for (const status of ['captured', 'voided', 'expired'] as const) assert.equal(holdStatus({ status, expires_at: at }, new Date(at.getTime() + 1)), status);
  });
});
