// `payctl trigger <event type>`: makes the sandbox emit an event by doing, through the public API,
// what causes it: test funds for balance.updated, an internal transfer to a sandbox account made
// for the purpose for the transfer lifecycle, and a bank transfer the fiat rail acts a failure
// out on (the Sandbox-Scenario header) for transfer.failed and transfer.rolled_back.
import { randomUUID } from 'node:crypto';
import { request, type Connection } from './api';

interface Trigger { description: string; run(connection: Connection): Promise<string> }

const post = (connection: Connection, path: string, body: unknown, headers: Record<string, string> = {}) =>
  request(connection, 'POST', path, { body, headers: { 'idempotency-key': `payctl-trigger-${randomUUID()}`, ...headers } });

async function fund(connection: Connection): Promise<void> {
  await post(connection, '/v1/sandbox/faucet', { currency: 'USD', amount: '10.00' });
}

/** A sandbox account to pay, made for the trigger (sign-up needs no credential). */
async function recipient(connection: Connection): Promise<{ email: string; viban: { account_number: string; bank_name: string; bank_country: string } }> {
  const email = `payctl-trigger-${randomUUID()}@example.com`;
  const answer = await request(connection, 'POST', '/v1/sandbox/accounts', {
    token: null, body: { email, password: `payctl-${randomUUID()}`, business_name: 'payctl trigger recipient', country_code: 'GB' },
  });
  const vibans = (answer.body as { vibans: Array<{ currency: string; account_number: string; bank_name: string; bank_country: string }> }).vibans;
  return { email, viban: vibans.find((v) => v.currency === 'USD')! };
}

async function internalTransfer(connection: Connection): Promise<string> {
  await fund(connection);
  const to = await recipient(connection);
  const answer = await post(connection, '/v1/transfers', { recipient_email: to.email, amount: '1.00', currency: 'USD', note: 'payctl trigger' });
  const transfer = answer.body as { transfer_id: string; status: string };
  return `transfer ${transfer.transfer_id} to ${to.email}: ${transfer.status}`;
}

function bankTransfer(scenario: string): (connection: Connection) => Promise<string> {
  return async (connection) => {
    await fund(connection);
    const to = await recipient(connection);
    const answer = await post(connection, '/v1/transfers', {
      recipient: { email: to.email, name: 'payctl trigger recipient', bank: { country: to.viban.bank_country, bank_name: to.viban.bank_name, account_number: to.viban.account_number, currency: 'USD' } },
      amount: '1.00', currency: 'USD', note: `payctl trigger (${scenario})`,
    }, { 'sandbox-scenario': scenario });
    const transfer = answer.body as { transfer_id: string; status: string };
    return `bank transfer ${transfer.transfer_id} (Sandbox-Scenario: ${scenario}): ${transfer.status}; the rail acts it out in a moment`;
  };
}

const TRIGGERS: Record<string, Trigger> = {
  'balance.updated': { description: 'test funds: 10.00 USD from the faucet', run: async (c) => { await fund(c); return 'faucet credit of 10.00 USD'; } },
  'transfer.pending': { description: 'an internal transfer of 1.00 USD to a sandbox account made for it', run: internalTransfer },
  'transfer.executing': { description: 'the same internal transfer (pending, executing, completed in one step)', run: internalTransfer },
  'transfer.completed': { description: 'the same internal transfer', run: internalTransfer },
  'transfer.failed': { description: 'a bank transfer the fiat rail declines (Sandbox-Scenario: decline)', run: bankTransfer('decline') },
  'transfer.rolled_back': { description: 'a bank transfer the fiat rail accepts, then reverses (Sandbox-Scenario: reverse)', run: bankTransfer('reverse') },
};

export const TRIGGER_TYPES = Object.keys(TRIGGERS);

export function describeTriggers(): Array<{ event: string; what: string }> {
  return Object.entries(TRIGGERS).map(([event, trigger]) => ({ event, what: trigger.description }));
}

export function trigger(connection: Connection, type: string): Promise<string> {
  return TRIGGERS[type].run(connection);
}
