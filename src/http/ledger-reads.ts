// Reading the ledger back: transactions (the per-account view of the journal), balances, and the
// sandbox faucet that credits test funds through the ledger.
import { derivedUuid, type LedgerClient } from '../ledger-client';
import { amountSchema, CURRENCIES, CURRENCY_SCALE, currencySchema, formatAmount, Money, parseAmount, requireCurrency, SETTLEMENT_CURRENCY, type Amount, type Currency } from '../../ledger/money';
import type { Environment } from '../config';
import type { Db } from '../db';
import { DomainError } from '../errors';
import { accountIdQuerySchema, actingAccountId, actingAccountIdForWrite, assertOwnResource } from './acting';
import { keysetPage } from '../pagination';
import { listQuerySchema, listResponseSchema } from './pagination';
import type { RouteDef, RouteResult } from './route';
import { RETRY_AFTER_SECONDS } from '../idempotency';

interface TransactionRow {
  id: string; seq: string; entry_id: string; kind: string; transfer_id: string | null; account_id: string; currency: Currency;
  amount: string; balance_after: string; created_at: Date; transfer_status: string | null;
}

const transactionSchema = {
  type: 'object', required: ['id', 'entry_id', 'type', 'transfer_id', 'direction', 'amount', 'currency', 'status', 'balance_after', 'created_at'],
  properties: {
    id: { type: 'string', format: 'uuid' }, entry_id: { type: 'string' }, type: { type: 'string' }, transfer_id: { type: ['string', 'null'] },
    direction: { type: 'string', enum: ['credit', 'debit'] }, amount: { type: 'string' }, currency: { type: 'string' },
    status: { type: 'string' }, balance_after: { type: 'string' }, created_at: { type: 'string' },
  },
};

const decimal = { type: 'string', description: 'a decimal amount' };
/** SPEC.md section 2 "Balance total", and each rail at its own scale. */
const balanceSchema = {
  type: 'object', required: ['totals', 'breakdown'],
  properties: {
    totals: {
      type: 'array', description: 'per settlement currency: stablecoin rails roll into USD and EUR',
      items: { type: 'object', required: ['currency', 'amount', 'available', 'pending'], properties: { currency: { type: 'string' }, amount: decimal, available: decimal, pending: decimal } },
    },
    breakdown: {
      type: 'array', description: 'each currency the account holds, at its full scale',
      items: { type: 'object', required: ['currency', 'settlement_currency', 'available', 'pending'], properties: { currency: { type: 'string' }, settlement_currency: { type: 'string' }, available: decimal, pending: decimal } },
    },
  },
};

const faucetCreditSchema = {
  type: 'object', required: ['id', 'account_id', 'currency', 'amount', 'balance'],
  properties: {
    id: { type: 'string', format: 'uuid', description: 'the journal entry' }, account_id: { type: 'string', format: 'uuid' },
    currency: { type: 'string' }, amount: { type: 'string' },
    balance: { type: 'object', required: ['currency', 'available', 'pending'], properties: { currency: { type: 'string' }, available: { type: 'string' }, pending: { type: 'string' } } },
  },
};

const transactionView = (row: TransactionRow) => {
  const amount = new Money(row.amount);
  return {
    id: row.id, entry_id: row.entry_id, type: row.kind, transfer_id: row.transfer_id,
    direction: amount.isNegative() ? 'debit' : 'credit',
    amount: formatAmount(amount.abs(), row.currency), currency: row.currency,
    status: row.transfer_status ?? 'completed',
    balance_after: formatAmount(row.balance_after, row.currency),
    created_at: row.created_at.toISOString(),
  };
};

/** Transactions are the postings on the account's `available` ledger accounts. */
const transactions = (db: Db) => db('postings as p')
  .join('ledger_accounts as la', (on) => on.on('la.id', 'p.ledger_account_id').andOnVal('la.kind', 'available'))
  .join('journal_entries as je', 'je.id', 'p.entry_id')
  .leftJoin('transfers as t', 't.id', 'p.transfer_id')
  .select('p.id', 'p.seq', 'p.entry_id', 'je.kind', 'p.transfer_id', 'p.account_id', 'p.currency', 'p.amount', 'p.balance_after', 'p.created_at',
    't.status as transfer_status');

export function ledgerReadRoutes(db: Db, ledger: LedgerClient, environment: Environment, replyTimeoutMs: number): RouteDef[] {
  return [
    {
      method: 'GET', path: '/v1/transactions', operationId: 'listTransactions', tag: 'transactions',
      summary: 'Ledger records of the account, newest first', auth: { kind: 'key', scope: 'transactions:read' },
      query: listQuerySchema({ account_id: accountIdQuerySchema }),
      response: { status: 200, description: 'a page of transactions', schema: listResponseSchema(transactionSchema) },
      handler: async (request) => {
        const page = await keysetPage(transactions(db).where('p.account_id', actingAccountId(request)), 'p', request.query, transactionView, ['seq']);
        return { status: 200, body: page };
      },
    },
    {
      method: 'GET', path: '/v1/transactions/{id}', operationId: 'getTransaction', tag: 'transactions',
      summary: 'One ledger record', auth: { kind: 'key', scope: 'transactions:read' },
      params: { type: 'object', properties: { id: { type: 'string', format: 'uuid' } } },
      response: { status: 200, description: 'the transaction', schema: transactionSchema },
      handler: async (request) => {
        const row: TransactionRow | undefined = await transactions(db).where('p.id', request.params.id).first();
        if (!row) throw new DomainError('resource_not_found', 'no such transaction', request.params.id);
        assertOwnResource(request, row.account_id, row.id);
        return { status: 200, body: transactionView(row) };
      },
    },
    {
      method: 'GET', path: '/v1/accounts/me/balance', operationId: 'getMyBalance', tag: 'accounts',
      summary: 'Balance totals per settlement currency (dashboard)', auth: { kind: 'dashboard' },
      query: { type: 'object', additionalProperties: false, properties: { account_id: accountIdQuerySchema } },
      response: { status: 200, description: 'the totals', schema: balanceSchema },
      handler: async (request) => {
        const rows: Array<{ kind: 'available' | 'pending'; currency: Currency; balance: string }> = await db('ledger_accounts')
          .where('account_id', actingAccountId(request)).select('kind', 'currency', 'balance');
        return { status: 200, body: balanceTotals(rows) };
      },
    },
    {
      method: 'POST', path: '/v1/sandbox/faucet', operationId: 'sandboxFaucet', tag: 'sandbox',
      summary: "Credit test funds to the caller's account through the ledger", auth: { kind: 'key', scope: 'transfers:write', moneyMoving: true }, idempotent: true,
      body: {
        type: 'object', additionalProperties: false, required: ['currency', 'amount'],
        properties: { currency: currencySchema, amount: amountSchema, account_id: { type: 'string', format: 'uuid', description: 'master key only' } },
      },
      response: { status: 201, description: 'the credit and the new balance', schema: faucetCreditSchema },
      provisionalSchema: { type: 'object', required: ['status', 'currency', 'amount'], properties: { status: { type: 'string', const: 'pending' }, currency: { type: 'string' }, amount: { type: 'string' } } },
      provisional: async (request) => {
        const currency = requireCurrency(request.body.currency);
        return faucetPending(currency, parseAmount(request.body.amount, currency));
      },
      handler: async (request) => {
        if (environment !== 'sandbox') throw new DomainError('resource_not_found', 'the faucet exists only in the sandbox');
        const accountId = await actingAccountIdForWrite(request, db);
        const currency = requireCurrency(request.body.currency);
        const amount = parseAmount(request.body.amount, currency);
        const commandId = derivedUuid('faucet.credit', accountId, request.idempotencyKey!);
        const reply = await ledger.execute('faucet.credit', commandId, accountId, { entry_id: derivedUuid('entry', commandId), currency, amount: amount.toFixed() }, replyTimeoutMs);
        if (!reply) return faucetPending(currency, amount);
        return { status: reply.status, body: reply.body };
      },
    },
  ];
}

/** The answer while the ledger has not decided a faucet credit: not stored; repeat to learn more. */
function faucetPending(currency: Currency, amount: Amount): RouteResult {
  return { status: 202, final: false, headers: { 'Retry-After': RETRY_AFTER_SECONDS }, body: { status: 'pending', currency, amount: formatAmount(amount, currency) } };
}

/**
 * Totals per settlement currency (SPEC.md section 2): stablecoin rails roll into USD and EUR.
 * Totals print at the settlement currency's scale, rounded down so they never overstate funds;
 * `breakdown` gives each rail at its full scale.
 */
export function balanceTotals(rows: Array<{ kind: 'available' | 'pending'; currency: Currency; balance: string }>) {
  const sum = (currency: Currency, kind: 'available' | 'pending') => rows
    .filter((r) => r.currency === currency && r.kind === kind)
    .reduce((total, r) => total.plus(r.balance), new Money(0));
  const settlement = [...new Set(CURRENCIES.map((c) => SETTLEMENT_CURRENCY[c]))];
  const totals = settlement.map((target) => {
    const members = CURRENCIES.filter((c) => SETTLEMENT_CURRENCY[c] === target);
    const availableTotal = members.reduce((t, c) => t.plus(sum(c, 'available')), new Money(0));
    const pendingTotal = members.reduce((t, c) => t.plus(sum(c, 'pending')), new Money(0));
    const print = (v: Amount) => v.toFixed(CURRENCY_SCALE[target], Money.ROUND_DOWN);
    return { currency: target, amount: print(availableTotal.plus(pendingTotal)), available: print(availableTotal), pending: print(pendingTotal) };
  });
  const breakdown = CURRENCIES.filter((c) => rows.some((r) => r.currency === c)).map((currency) => ({
    currency, settlement_currency: SETTLEMENT_CURRENCY[currency],
    available: formatAmount(sum(currency, 'available'), currency), pending: formatAmount(sum(currency, 'pending'), currency),
  }));
  return { totals, breakdown };
}
