// Reading the ledger back: transactions (the per-account view of the journal) and balances.
import { CURRENCIES, CURRENCY_SCALE, formatAmount, Money, SETTLEMENT_CURRENCY, type Amount, type Currency } from '../../ledger/money';
import { atQuerySchema, instantOf } from './at';
import { DomainError } from '../domain-error';
import { accountIdQuerySchema, actingAccountId, assertOwnResource } from '../http/acting-account';
import type { BalanceRow, LedgerReads, TransactionRow } from './reads';
import { listFilterOf, listFilterSchemas, listQuerySchema, listResponseSchema } from '../http/pagination';
import type { RouteDef } from '../http/route';
import { idParams } from '../http/validation';


const transactionSchema = {
  type: 'object', required: ['id', 'entry_id', 'type', 'transfer_id', 'direction', 'amount', 'currency', 'status', 'balance_after', 'created_at'],
  properties: {
    id: { type: 'string', format: 'uuid' }, entry_id: { type: 'string' }, type: { type: 'string' }, transfer_id: { type: ['string', 'null'] },
    direction: { type: 'string', enum: ['credit', 'debit'] }, amount: { type: 'string' }, currency: { type: 'string' },
    status: { type: 'string', description: 'the state of the transfer or payment the movement belongs to (a hold of one still executing or sent is not completed); completed for a movement of neither (test funds, a conversion)' }, balance_after: { type: 'string' }, created_at: { type: 'string' },
  },
};

const decimal = { type: 'string', description: 'a decimal amount' };
/** SPEC.md section 2 "Balance total", and each rail at its own scale. */
const balanceSchema = {
  type: 'object', required: ['totals', 'breakdown'],
  properties: {
    totals: {
      type: 'array', description: 'per settlement currency: stablecoin rails roll into USD and EUR',
      items: {
        type: 'object', description: 'summed exactly, then shown at the currency\'s scale: amount = available + held + pending (the money the account owns), amount, available and held (kept by active holds) rounded down, pending = amount - available - held as shown',
        required: ['currency', 'amount', 'available', 'pending', 'held'], properties: { currency: { type: 'string' }, amount: decimal, available: decimal, pending: decimal, held: decimal },
      },
    },
    breakdown: {
      type: 'array', description: 'each currency the account holds, at its full scale',
      items: { type: 'object', required: ['currency', 'settlement_currency', 'available', 'pending', 'held'], properties: { currency: { type: 'string' }, settlement_currency: { type: 'string' }, available: decimal, pending: decimal, held: decimal } },
    },
  },
};

const transactionView = (row: TransactionRow) => {
  const amount = new Money(row.amount);
  return {
    id: row.id, entry_id: row.entry_id, type: row.kind, transfer_id: row.transfer_id,
    direction: amount.isNegative() ? 'debit' : 'credit',
    amount: formatAmount(amount.abs(), row.currency), currency: row.currency,
    // The state of what the movement belongs to: a held amount is not a completed one.
    status: row.transfer_status ?? row.payment_status ?? 'completed',
    balance_after: formatAmount(row.balance_after, row.currency),
    created_at: row.created_at.toISOString(),
  };
};

export function ledgerReadRoutes(reads: LedgerReads): RouteDef[] {
  return [
    {
      method: 'GET', path: '/v1/transactions', operationId: 'listTransactions', tag: 'transactions',
      summary: 'Ledger records of the account, newest first; the filters combine', auth: { kind: 'key', scope: 'transactions:read' },
      query: listQuerySchema({ ...listFilterSchemas('transactions', 'movements of the account\'s own transfers and payments'), account_id: accountIdQuerySchema }),
      response: { status: 200, description: 'a page of transactions', schema: listResponseSchema(transactionSchema) },
      handler: async (request) => {
        return { status: 200, body: await reads.transactionPage(actingAccountId(request), listFilterOf(request.query), request.query, transactionView) };
      },
    },
    {
      method: 'GET', path: '/v1/transactions/{id}', operationId: 'getTransaction', tag: 'transactions',
      summary: 'One ledger record', auth: { kind: 'key', scope: 'transactions:read' },
      params: idParams,
      response: { status: 200, description: 'the transaction', schema: transactionSchema },
      handler: async (request) => {
        const row = await reads.transaction(request.params.id);
        if (!row) throw new DomainError('resource_not_found', 'no such transaction', request.params.id);
        assertOwnResource(request, row.account_id, row.id);
        return { status: 200, body: transactionView(row) };
      },
    },
    {
      method: 'GET', path: '/v1/accounts/me/balance', operationId: 'getMyBalance', tag: 'accounts',
      summary: 'Balance totals per settlement currency (dashboard); at: as they were at that instant', auth: { kind: 'dashboard' },
      query: { type: 'object', additionalProperties: false, properties: { account_id: accountIdQuerySchema, at: atQuerySchema } },
      response: { status: 200, description: 'the totals', schema: balanceSchema },
      handler: async (request) => {
        const at = instantOf(request.query.at);
        return { status: 200, body: balanceTotals(await reads.balances(actingAccountId(request), at)) };
      },
    },
  ];
}

/**
 * Totals per settlement currency (SPEC.md section 2): stablecoin rails roll into USD and EUR.
 * `amount` is the money the account owns: available + held + pending (DESIGN.md section 3), as on
 * a wallet and in the balance events. Each total is summed exactly, then printed at the settlement
 * currency's scale once, so the four shown add up: `amount`, `available` and `held` are rounded
 * down (they never overstate funds) and `pending` is what is left, `amount - available - held` as
 * shown. Rounded alone, 10.00 USD and 0.005 USDC available and 0.005 pending showed amount 10.01,
 * available 10.00 and pending 0.00.
 * `breakdown` gives each rail at its full scale.
 */
export function balanceTotals(rows: BalanceRow[]) {
  const sum = (currency: Currency, kind: 'available' | 'pending' | 'held') => rows
    .filter((r) => r.currency === currency && r.kind === kind)
    .reduce((total, r) => total.plus(r.balance), new Money(0));
  const settlement = [...new Set(CURRENCIES.map((c) => SETTLEMENT_CURRENCY[c]))];
  const totals = settlement.map((target) => {
    const members = CURRENCIES.filter((c) => SETTLEMENT_CURRENCY[c] === target);
    const availableTotal = members.reduce((t, c) => t.plus(sum(c, 'available')), new Money(0));
    const pendingTotal = members.reduce((t, c) => t.plus(sum(c, 'pending')), new Money(0));
    const down = (v: Amount) => new Money(v.toFixed(CURRENCY_SCALE[target], Money.ROUND_DOWN));
    // Held money (DESIGN.md section 5g) is out of available until captured or released, and still the account's.
    const heldTotal = members.reduce((t, c) => t.plus(sum(c, 'held')), new Money(0));
    const amount = down(availableTotal.plus(heldTotal).plus(pendingTotal));
    const shownAvailable = down(availableTotal);
    const shownHeld = down(heldTotal);
    const print = (v: Amount) => v.toFixed(CURRENCY_SCALE[target]);
    return { currency: target, amount: print(amount), available: print(shownAvailable), pending: print(amount.minus(shownAvailable).minus(shownHeld)), held: print(shownHeld) };
  });
  const breakdown = CURRENCIES.filter((c) => rows.some((r) => r.currency === c)).map((currency) => ({
    currency, settlement_currency: SETTLEMENT_CURRENCY[currency],
    available: formatAmount(sum(currency, 'available'), currency), pending: formatAmount(sum(currency, 'pending'), currency), held: formatAmount(sum(currency, 'held'), currency),
  }));
  return { totals, breakdown };
}
