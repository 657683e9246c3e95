// The sandbox faucet: credits test funds to an account through the ledger, as a command like any
// other money movement (the ledger is the only writer of money).
import { FAUCET_CREDIT_MAX, FAUCET_DAILY_MAX } from '../../ledger/commands/faucet-credit';
import { amountScaleRule, amountSchema, currencySchema, formatAmount, parseAmount, requireCurrency, type Amount, type Currency } from '../../ledger/money';
import type { Environment } from '../config';
import type { Db } from '../db';
import { DomainError } from '../domain-error';
import { actingAccountIdForWrite } from '../http/acting-account';
import { withBody, type RouteDef, type RouteResult } from '../http/route';
import { derivedUuid, idempotentCommandId } from '../idempotency/derived-ids';
import { RETRY_AFTER_SECONDS } from '../idempotency/guard';
import { decisionAnswer, faucetAnswer } from '../ledger-client/answers';
import { type LedgerClient } from '../ledger-client/client';

const faucetCreditSchema = {
  type: 'object', required: ['id', 'account_id', 'currency', 'amount', 'balance'],
  properties: {
    id: { type: 'string', format: 'uuid', description: 'the journal entry' }, account_id: { type: 'string', format: 'uuid' },
    currency: { type: 'string' }, amount: { type: 'string' },
    balance: { type: 'object', required: ['currency', 'available', 'pending'], properties: { currency: { type: 'string' }, available: { type: 'string' }, pending: { type: 'string' } } },
  },
};

export function faucetRoutes(db: Db, ledger: LedgerClient, environment: Environment, replyTimeoutMs: number): RouteDef[] {
  return [
    withBody({
      type: 'object', additionalProperties: false, required: ['currency', 'amount'], ...amountScaleRule(),
      properties: { currency: currencySchema, amount: amountSchema, account_id: { type: 'string', format: 'uuid', description: 'master key only' } },
    }, {
      method: 'POST', path: '/v1/sandbox/faucet', operationId: 'sandboxFaucet', tag: 'sandbox',
      summary: "Credit test funds to the caller's account through the ledger", auth: { kind: 'key', scope: 'transfers:write', moneyMoving: true }, idempotent: 'ledger',
      response: { status: 201, description: 'the credit and the new balance', schema: faucetCreditSchema },
      errors: ['faucet_limit_exceeded', 'account_no_chain_wallet'],
      errorNotes: {
        faucet_limit_exceeded: `more than ${FAUCET_CREDIT_MAX} in one credit, or more than ${FAUCET_DAILY_MAX} of a currency to one account in a UTC day (the ledger's clock); nothing is credited`,
        account_no_chain_wallet: 'USDC or EURC to an account without a chain wallet (sign up with chain_wallet: true)',
      },
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
        const commandId = idempotentCommandId(accountId, request.idempotencyKey!);
        const credit = { entry_id: derivedUuid('entry', commandId), currency, amount: amount.toFixed() };
        const decision = await ledger.execute('faucet.credit', commandId, accountId, credit, replyTimeoutMs, { key: request.idempotencyKey!, fingerprint: request.fingerprint! });
        return decision ? decisionAnswer(decision, 'faucet_credit', faucetAnswer) : faucetPending(currency, amount);
      },
    }),
  ];
}

/** The answer while the ledger has not decided a faucet credit: not stored; repeat to learn more. */
function faucetPending(currency: Currency, amount: Amount): RouteResult {
  return { status: 202, final: false, headers: { 'Retry-After': RETRY_AFTER_SECONDS }, body: { status: 'pending', currency, amount: formatAmount(amount, currency) } };
}
