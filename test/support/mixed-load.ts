// A randomized mix of everything that moves money, among a group of sandbox accounts: transfers
// (internal and to a member's bank), FX conversions (a quote, then its execution) and payments
// (funds added through openbank, euros sent through fiat) for a customer each member has linked.
// Every request is repeated with its Idempotency-Key until its answer is final, as a client would;
// a 5xx fails the load (it causes no outage of a dependency, so none is expected).
import { randomUUID } from 'node:crypto';
import type { Db } from '../../src/db';
import { Money, type Amount } from '../../ledger/money';
import type { SignedUp } from './accounts';
import { createCustomer } from './accounts';
import { call, eventually, refuseServerError, type JsonResponse } from './http';
import { linkCustomer } from './partner-links';
import { prng } from './prng';

export type Linked = SignedUp & { customerId: string };

/** A person with a German bank account in euros: what a fiat payout in the load pays. */
export const BANK_PAYEE = {
  email: 'payee@example.com', first_name: 'Pat', last_name: 'Payee', country_code: 'DE', kind: 'personal',
  bank: { iso_country_code: 'DE', bank_name: 'Bank', currency_code: 'EUR', bank_account_number: 'DE89370400440532013000' },
};

/**
 * What completed payments and executed conversions moved, per account and currency: a pay-in
 * came in, a payout went out (a held one is still the account's), a conversion took one currency
 * and gave another.
 */
export async function paymentAndConversionMovements(db: Db, accountIds: string[]): Promise<Array<{ accountId: string; currency: string; amount: Amount }>> {
  const { rows: payments } = await db.raw(`SELECT account_id, direction, amount::text, currency FROM payments WHERE account_id = ANY(?::uuid[]) AND status = 'completed'`, [accountIds]);
  const { rows: quotes } = await db.raw(
    `SELECT account_id, from_currency, from_amount::text, to_currency, to_amount::text FROM fx_quotes WHERE account_id = ANY(?::uuid[]) AND consumed_at IS NOT NULL`, [accountIds]);
  return [
    ...payments.map((p: any) => ({ accountId: p.account_id, currency: p.currency, amount: p.direction === 'inbound' ? new Money(p.amount) : new Money(p.amount).negated() })),
    ...quotes.flatMap((q: any) => [
      { accountId: q.account_id, currency: q.from_currency, amount: new Money(q.from_amount).negated() },
      { accountId: q.account_id, currency: q.to_currency, amount: new Money(q.to_amount) },
    ]),
  ];
}

/** Gives each member a customer linked with openbank and fiat, through the consent page. */
export async function linkGroup(baseUrl: string, group: SignedUp[]): Promise<Linked[]> {
  return Promise.all(group.map(async (member) => {
    const customerId: string = (await createCustomer(baseUrl, member.key)).body.id;
    for (const partner of ['openbank', 'fiat']) await linkCustomer(baseUrl, member.key, customerId, partner);
    return { ...member, customerId };
  }));
}

/** A write repeated with the same Idempotency-Key while its decision is late (202, SPEC.md section 7). */
async function final(baseUrl: string, key: string, path: string, body: unknown): Promise<JsonResponse> {
  const idempotencyKey = randomUUID();
  for (let attempt = 0; attempt < 60; attempt++) {
    const response = await call(baseUrl, 'POST', path, body, { token: key, idempotencyKey });
    refuseServerError('POST', path, response);
    if (response.status !== 202) return response;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`${path} got no final answer after 60 attempts`);
}

export interface MixedResult { transfers: string[]; payments: string[]; conversions: number; refused: Map<string, number> }

export async function mixedLoad(baseUrl: string, group: Linked[], count: number, concurrency: number, seed: number): Promise<MixedResult> {
  const random = prng(seed);
  const result: MixedResult = { transfers: [], payments: [], conversions: 0, refused: new Map() };
  const refuse = (response: JsonResponse) => result.refused.set(response.body.error, (result.refused.get(response.body.error) ?? 0) + 1);
  const amount = () => `${1 + Math.floor(random() * 20)}.${String(Math.floor(random() * 100)).padStart(2, '0')}`;
  const one = async () => {
    const member = group[Math.floor(random() * group.length)];
    let other = group[Math.floor(random() * group.length)];
    if (other === member) other = group[(group.indexOf(member) + 1) % group.length];
    const roll = random();
    if (roll < 0.5) {
      const viban = other.vibans.find((v) => v.currency === 'USD')! as any;
      const body = random() < 0.7 ? { amount: amount(), currency: 'USD', recipient_email: other.email }
        : { amount: amount(), currency: 'USD', recipient: { email: other.email, name: 'Member', bank: { country: viban.bank_country, bank_name: viban.bank_name, account_number: viban.account_number, currency: 'USD' } } };
      const response = await final(baseUrl, member.key, '/v1/transfers', body);
      if (response.status < 300) result.transfers.push(response.body.transfer_id); else refuse(response);
    } else if (roll < 0.75) {
      const [from, to] = random() < 0.5 ? ['USD', 'EUR'] : ['EUR', 'USD'];
      const quote = await final(baseUrl, member.key, '/v1/fx/quote', { from_currency: from, to_currency: to, from_amount: amount() });
      if (quote.status >= 300) { refuse(quote); return; }
      const executed = await final(baseUrl, member.key, '/v1/fx/execute', { quote_id: quote.body.id });
      if (executed.status < 300) result.conversions++; else refuse(executed);
    } else {
      const body = random() < 0.5
        ? ['/v1/payments/add-funds', { customer_id: member.customerId, partner: 'openbank', amount: amount(), currency: 'USD' }] as const
        : ['/v1/payments/send', {
          customer_id: member.customerId, partner: 'fiat', amount: amount(), currency: 'EUR', purpose: 'load',
          payee: BANK_PAYEE,
        }] as const;
      const response = await final(baseUrl, member.key, body[0], body[1]);
      if (response.status < 300) result.payments.push(response.body.id); else refuse(response);
    }
  };
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => { while (next++ < count) await one(); }));
  return result;
}

/** Waits for every payment of the group to end; then what the group must hold per currency. */
export async function expectedHoldings(db: Db, group: SignedUp[], funding: Record<string, Amount>): Promise<Record<string, string>> {
  const ids = group.map((m) => m.account.id);
  await eventually(async () => {
    const { rows } = await db.raw(`SELECT count(*)::int AS open FROM payments WHERE account_id = ANY(?::uuid[]) AND status IN ('pending', 'sent', 'authorized')`, [ids]);
    return rows[0].open === 0 ? true : undefined;
  }, 60_000, 'every payment to end');
  const expected = new Map(Object.entries(funding).map(([currency, amount]) => [currency, new Money(amount)]));
  for (const { currency, amount } of await paymentAndConversionMovements(db, ids)) expected.set(currency, (expected.get(currency) ?? new Money(0)).plus(amount));
  return Object.fromEntries([...expected].map(([currency, amount]) => [currency, amount.toFixed(6)]));
}
