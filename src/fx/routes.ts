// FX quotes (SPEC.md section 4, FX; DESIGN.md section 5b). The public quote needs no credential
// and stores nothing: it prices an amount at the live rate, shows the mid-rate and the spread
// beside the rate, and says until when that price would hold. Callers without a credential are
// rate-limited by their address (src/guards/rate-limit.ts). A persisted quote locks that price
// for the caller's account (src/fx/quotes.ts); sandbox time can expire it at once.
import type { FxQuoteRecord } from '../../ledger/fx-quotes';
import { conversionRules, isSupportedPair, price, RATE_DECIMALS, type PricedConversion } from '../../ledger/fx-rates';
import type { FxExecute } from '../../ledger/commands/fx-execute';
import { amountScaleRule, amountSchema, currencySchema, formatAmount, Money, parseAmount, requireCurrency } from '../../ledger/money';
import type { Environment } from '../config';
import { now, wallNow } from '../clock';
import type { Db } from '../db';
import { DomainError } from '../domain-error';
import { actingAccountIdForWrite } from '../http/acting-account';
import { withBody, type RouteDef, type RouteRequest, type RouteResult } from '../http/route';
import { idParams } from '../http/validation';
import { createdId, derivedUuid, idempotentCommandId } from '../idempotency/derived-ids';
import { createdAnswer, RETRY_AFTER_SECONDS } from '../idempotency/guard';
import { decisionAnswer, fxExecutionAnswer, quoteView } from '../ledger-client/answers';
import { type LedgerClient } from '../ledger-client/client';
import type { FxQuotes } from './quotes';

const decimal = (description: string) => ({ type: 'string', description } as const);
const quoteSchema = {
  type: 'object',
  required: ['from_currency', 'to_currency', 'from_amount', 'rate', 'mid_rate', 'spread', 'to_amount', 'expires_at'],
  properties: {
    from_currency: { type: 'string' }, to_currency: { type: 'string' },
    from_amount: decimal('the amount to convert, at the from currency\'s scale'),
    rate: decimal(`units of to_currency per unit of from_currency, after the spread, ${RATE_DECIMALS} decimals, rounded down`),
    mid_rate: decimal('the market mid-rate the rate derives from'),
    spread: decimal('the fraction of the amount the conversion costs: rate = mid_rate × (1 - spread), rounded down'),
    to_amount: decimal('from_amount × rate, rounded down to the to currency\'s scale'),
    expires_at: { type: 'string', format: 'date-time', description: 'until when the price holds' },
  },
};

const quoteBodySchema = {
  type: 'object', additionalProperties: false, required: ['from_currency', 'to_currency', 'from_amount'],
  description: 'two different currencies of USD, EUR and GBP (any other pair is 400 unsupported_pair)',
  examples: [{ from_currency: 'USD', to_currency: 'EUR', from_amount: '100.00' }],
  allOf: [amountScaleRule('from_amount', 'from_currency'), ...conversionRules('from_currency', ['to_currency'], false)],
  properties: { from_currency: currencySchema, to_currency: currencySchema, from_amount: amountSchema },
} as const;
/** A persisted quote's body: the master key names the account it quotes for. */
const persistedQuoteBodySchema = {
  ...quoteBodySchema,
  properties: { ...quoteBodySchema.properties, account_id: { type: 'string', format: 'uuid', description: 'master key only' } },
} as const;

const persistedQuoteSchema = {
  type: 'object',
  required: ['id', 'status', ...quoteSchema.required, 'created_at', 'consumed_at'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    status: { type: 'string', enum: ['created', 'expired', 'consumed'], description: 'created until expires_at; expired after it; consumed once executed' },
    ...quoteSchema.properties,
    expires_at: { type: 'string', format: 'date-time', description: 'until when the rate is locked; POST /v1/fx/execute compares it with the ledger\'s clock when the ledger decides the execution, not when the request arrived' },
    created_at: { type: 'string', format: 'date-time' },
    consumed_at: { type: ['string', 'null'], format: 'date-time' },
  },
};

/** A quote request checked and priced at `at` (the wall's now, or the account's test clock's): @throws DomainError */
function priceRequest(body: { from_currency: string; to_currency: string; from_amount: string }, at: Date): PricedConversion {
  const from = requireCurrency(body.from_currency, 'from_currency');
  const to = requireCurrency(body.to_currency, 'to_currency');
  if (!isSupportedPair(from, to)) {
    throw new DomainError('unsupported_pair', `${from} to ${to} is not a supported pair; USD, EUR and GBP convert among themselves`, 'to_currency');
  }
  const fromAmount = parseAmount(body.from_amount, from, 'from_amount');
  const priced = price(from, to, fromAmount, at);
  if (new Money(priced.toAmount).isZero()) {
    throw new DomainError('invalid_request', `from_amount is too small to buy any ${to}`, 'from_amount');
  }
  return { from, to, fromAmount, price: priced, at };
}

const executionSchema = {
  type: 'object', required: ['quote', 'entry_id', 'debit_transaction_id', 'credit_transaction_id'],
  properties: {
    quote: { ...persistedQuoteSchema, description: 'the quote, consumed' },
    entry_id: { type: 'string', format: 'uuid', description: 'the journal entry of the conversion' },
    debit_transaction_id: { type: 'string', format: 'uuid', description: 'the transaction that took from_amount (GET /v1/transactions/{id})' },
    credit_transaction_id: { type: 'string', format: 'uuid', description: 'the transaction that paid to_amount' },
  },
};

const pendingExecutionSchema = {
  type: 'object', required: ['status', 'quote_id'],
  properties: { status: { type: 'string', const: 'pending' }, quote_id: { type: 'string', format: 'uuid' } },
};

/** The answer while the ledger has not decided an execution: not stored; repeat to learn more. */
function pendingExecution(quoteId: string): RouteResult {
  return { status: 202, final: false, headers: { 'Retry-After': RETRY_AFTER_SECONDS }, body: { status: 'pending', quote_id: quoteId } };
}


export interface FxRouteDeps {
  db: Db;
  quotes: FxQuotes;
  ledger: LedgerClient;
  environment: Environment;
  replyTimeoutMs: number;
}

export function fxRoutes({ db, quotes, ledger, environment, replyTimeoutMs }: FxRouteDeps): RouteDef[] {
  /** The caller's quote (any, for the master key); another account's is as unknown as a missing one (DESIGN.md section 5b). */
  const ownQuote = async (request: RouteRequest): Promise<FxQuoteRecord> => {
    const row = await quotes.byId(request.params.id);
    if (!row) throw new DomainError('quote_not_found', 'no such FX quote', request.params.id);
    if (request.principal!.accountId !== null && row.account_id !== request.principal!.accountId) {
      throw new DomainError('quote_not_found', 'no such FX quote', request.params.id);
    }
    return row;
  };
  return [
    withBody(quoteBodySchema, {
      method: 'POST', path: '/v1/fx/quotes', operationId: 'createPublicFxQuote', tag: 'fx',
      summary: 'Price a conversion at the live rate (no credential; stores nothing)', auth: { kind: 'public' },
      response: { status: 200, description: 'the price', schema: quoteSchema },
      errors: ['invalid_currency', 'unsupported_pair'],
      handler: async ({ body }) => {
        const { from, to, fromAmount, price: quote, at } = priceRequest(body, wallNow());
        return {
          status: 200,
          body: {
            from_currency: from, to_currency: to, from_amount: formatAmount(fromAmount, from), rate: quote.rate, mid_rate: quote.midRate,
            spread: quote.spread, to_amount: quote.toAmount, expires_at: quotes.expiresAt(at).toISOString(),
          },
        };
      },
    }),
    withBody(persistedQuoteBodySchema, {
      method: 'POST', path: '/v1/fx/quote', operationId: 'createFxQuote', tag: 'fx',
      summary: 'Lock a rate for the caller\'s account for 30 seconds, to execute with POST /v1/fx/execute',
      auth: { kind: 'key', scope: 'fx:write' }, idempotent: true,
      response: { status: 201, description: 'the quote', schema: persistedQuoteSchema },
      errors: ['invalid_currency', 'unsupported_pair'],
      handler: async (request) => {
        const accountId = await actingAccountIdForWrite(request, db);
        // Priced and locked on the account's time: a quote made on a test clock expires on the clock.
        const at = await now(db, accountId);
        const made = await quotes.create(createdId('fx-quote', request.executionId), accountId, priceRequest(request.body, at));
        return createdAnswer(quoteView(made.row, at), made.created);
      },
    }),
    withBody({
      type: 'object', additionalProperties: false, required: ['quote_id'],
      properties: {
        quote_id: { type: 'string', format: 'uuid', description: 'a persisted quote of the caller (POST /v1/fx/quote)' },
        account_id: { type: 'string', format: 'uuid', description: 'master key only' },
      },
    } as const, {
      method: 'POST', path: '/v1/fx/execute', operationId: 'executeFxQuote', tag: 'fx',
      summary: 'Convert inside the caller\'s account at a persisted quote\'s locked rate, once',
      auth: { kind: 'key', scope: 'fx:write', moneyMoving: true }, idempotent: 'ledger',
      response: { status: 201, description: 'the quote, consumed, and the conversion\'s transactions', schema: executionSchema },
      errors: ['quote_not_found', 'quote_expired', 'quote_already_consumed', 'insufficient_funds'],
      errorNotes: {
        quote_expired: 'the quote\'s expires_at had passed by the ledger\'s clock when the ledger decided the execution (not when the request arrived): a request sent just before expires_at and decided after it is refused, so execute with a margin',
      },
      provisional: async (request) => pendingExecution(request.body.quote_id),
      provisionalSchema: pendingExecutionSchema,
      handler: async (request) => {
        // The ledger decides (the quote's record, under a row lock): Redis never decides money.
        const accountId = await actingAccountIdForWrite(request, db);
        const commandId = idempotentCommandId(accountId, request.idempotencyKey!);
        const command: FxExecute = { quote_id: request.body.quote_id, entry_id: derivedUuid('entry', commandId) };
        const decision = await ledger.execute('fx.execute', commandId, accountId, command, replyTimeoutMs, { key: request.idempotencyKey!, fingerprint: request.fingerprint! });
        if (!decision) return pendingExecution(command.quote_id);
        return decisionAnswer(decision, 'fx_execution', fxExecutionAnswer);
      },
    }),
    {
      method: 'GET', path: '/v1/fx/quotes/{id}', operationId: 'getFxQuote', tag: 'fx',
      summary: 'A persisted quote: created, expired or consumed', auth: { kind: 'key', scope: 'fx:read', publishable: 'reads' },
      params: idParams,
      response: { status: 200, description: 'the quote', schema: persistedQuoteSchema },
      errors: ['quote_not_found'],
      handler: async (request) => {
        const quote = await ownQuote(request);
        return { status: 200, body: quoteView(quote, await now(db, quote.account_id)) };
      },
    },
    {
      method: 'POST', path: '/v1/sandbox/fx/quotes/{id}/expire', operationId: 'expireFxQuote', tag: 'sandbox',
      summary: 'Sandbox time: the quote expires now, so quote_expired can be tried without waiting',
      auth: { kind: 'key', scope: 'fx:write' }, idempotent: true,
      params: idParams,
      response: { status: 200, description: 'the quote, expired unless consumed', schema: persistedQuoteSchema },
      errors: ['quote_not_found'],
      handler: async (request) => {
        if (environment !== 'sandbox') throw new DomainError('resource_not_found', 'sandbox routes do not exist in the live environment');
        const row = await ownQuote(request);
        const at = await now(db, row.account_id);
        return { status: 200, body: quoteView((await quotes.expireNow(row.id, at))!, at) };
      },
    },
  ];
}
