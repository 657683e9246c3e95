// Payments through the partners (SPEC.md section 4, Payments; DESIGN.md section 5c). Add funds:
// the ledger records the payment first, then this route submits it to the partner with the
// customer's link token and records the partner's answer; the account is credited only when the
// partner settles (the settler, src/payments/settler.ts). A partner that stays unavailable is a
// 503 with nothing moved; an answer that leaves the outcome unknown is a 502, and the payment
// stays readable while the settler finds out.
import { amountSchema, currencySchema, formatAmount, parseAmount, requireCurrency } from '../../ledger/money';
import type { PaymentCreate, PaymentUpdate } from '../../ledger/messages';
import type { PaymentRecord } from '../../ledger/payments';
import { PAYMENT_STATUSES } from '../../ledger/payments';
import type { Db } from '../db';
import { DomainError } from '../errors';
import { derivedUuid, type LedgerClient } from '../ledger-client';
import type { PartnerLinks } from '../partner-links/links';
import type { PartnerClient, PartnerPayment } from '../partners/client';
import { isPartnerError } from '../partners/errors';
import type { PartnerSlug } from '../partners/registry';
import { actingAccountId, actingAccountIdForWrite, assertOwnResource } from './acting';
import { RETRY_AFTER_SECONDS } from './idempotency';
import { paymentAnswer, paymentView, refusalAnswer, unexpectedOutcome } from './outcomes';
import { listQuerySchema, listResponseSchema } from './pagination';
import { requirePartner } from './partner-links';
import type { PaymentReads } from '../read-models/payments';
import { withBody, type RouteDef, type RouteRequest, type RouteResult } from './route';

/** Partners that bring money in, and the currencies each carries (DESIGN.md section 5c). */
const PAY_IN_PARTNERS: Partial<Record<PartnerSlug, readonly string[]>> = { openbank: ['USD', 'EUR', 'GBP'] };

const nullable = (type: string) => ({ type: [type, 'null'] });
export const paymentSchema = {
  type: 'object',
  required: ['id', 'partner', 'direction', 'kind', 'amount', 'currency', 'status', 'external_id', 'claim_link', 'idempotency_key', 'retry_count',
    'customer_id', 'source_funding_method_external_id', 'failure', 'created_at', 'completed_at'],
  properties: {
    id: { type: 'string', format: 'uuid' }, partner: { type: 'string' }, direction: { type: 'string', enum: ['inbound', 'outbound'] },
    kind: { type: 'string', enum: ['add_funds', 'claimless', 'send'] }, amount: { type: 'string' }, currency: { type: 'string' },
    status: { type: 'string', enum: [...PAYMENT_STATUSES] }, external_id: nullable('string'), claim_link: nullable('string'),
    idempotency_key: { type: 'string' }, retry_count: { type: 'integer' }, customer_id: { type: 'string', format: 'uuid' },
    source_funding_method_external_id: nullable('string'),
    failure: { type: ['object', 'null'], required: ['code', 'message'], properties: { code: { type: 'string' }, message: nullable('string') } },
    created_at: { type: 'string', format: 'date-time' }, completed_at: { type: ['string', 'null'], format: 'date-time' },
  },
};

const addFundsBodySchema = {
  type: 'object', additionalProperties: false, required: ['customer_id', 'partner', 'amount', 'currency'],
  properties: {
    customer_id: { type: 'string', format: 'uuid' }, partner: { type: 'string', description: 'openbank brings funds in' },
    amount: amountSchema, currency: currencySchema,
    source_funding_method_external_id: { type: 'string', minLength: 1, maxLength: 200, description: 'optional: the customer\'s default funding method in the currency otherwise' },
  },
} as const;

export interface PaymentRouteDeps {
  db: Db;
  ledger: LedgerClient;
  links: PartnerLinks;
  clients: (partner: PartnerSlug) => PartnerClient;
  reads: PaymentReads;
  replyTimeoutMs: number;
}

function pendingAnswer(paymentId: string): RouteResult {
  return { status: 202, final: false, headers: { 'Retry-After': RETRY_AFTER_SECONDS }, body: { id: paymentId, status: 'pending' } };
}

export function paymentRoutes({ db, ledger, links, clients, reads, replyTimeoutMs }: PaymentRouteDeps): RouteDef[] {
  const ownCustomer = async (customerId: string, request: RouteRequest) => {
    const customer = await db('customers').where('id', customerId).first('id', 'account_id');
    if (!customer) throw new DomainError('resource_not_found', 'no such customer', 'customer_id');
    assertOwnResource(request, customer.account_id, customer.id);
    return customer as { id: string; account_id: string };
  };

  /** Records what the partner said, and answers with the payment as the ledger then holds it. */
  const record = async (payment: PaymentRecord, update: Omit<PaymentUpdate, 'payment_id' | 'retry_count'>): Promise<PaymentRecord> => {
    const commandId = `payment.update:${payment.id}:${update.status}`;
    const outcome = await ledger.execute('payment.update', commandId, payment.account_id, { ...update, payment_id: payment.id, retry_count: payment.retry_count }, replyTimeoutMs);
    if (outcome?.kind === 'payment') return outcome.payment;
    return (await reads.byId(payment.id)) ?? payment;
  };

  return [
    withBody(addFundsBodySchema, {
      method: 'POST', path: '/v1/payments/add-funds', operationId: 'addFunds', tag: 'payments',
      summary: 'Bring money in from a linked customer\'s account at a partner; credited once the partner settles',
      auth: { kind: 'key', scope: 'payments:write', moneyMoving: true }, idempotent: true, sandboxScenario: true,
      response: { status: 201, description: 'the payment, authorized', schema: paymentSchema },
      provisional: async (request) => pendingAnswer(derivedUuid('payment', derivedUuid('payment.create', (await actingAccountIdForWrite(request, db)), request.idempotencyKey!))),
      provisionalSchema: { type: 'object', required: ['id', 'status'], properties: { id: { type: 'string', format: 'uuid' }, status: { type: 'string', const: 'pending' } } },
      errors: ['invalid_partner', 'invalid_currency', 'customer_not_linked', 'partner_unavailable', 'partner_error'],
      handler: async (request) => {
        const { body } = request;
        const partner = requirePartner(body.partner);
        const currencies = PAY_IN_PARTNERS[partner];
        if (!currencies) throw new DomainError('invalid_partner', `${partner} does not bring funds in; add funds through openbank`, 'partner');
        const currency = requireCurrency(body.currency);
        if (!currencies.includes(currency)) throw new DomainError('invalid_currency', `${partner} carries ${currencies.join(', ')}`, 'currency');
        const amount = parseAmount(body.amount, currency);
        const accountId = await actingAccountIdForWrite(request, db);
        const customer = await ownCustomer(body.customer_id, request);
        const link = await links.activeLink(customer.id, partner);
        let fundingMethod = body.source_funding_method_external_id ?? null;
        const methods = await links.fundingMethods(link);
        if (fundingMethod === null) {
          fundingMethod = (methods.find((m) => m.currency === currency) ?? methods.find((m) => m.default))?.external_id ?? null;
        } else if (!methods.some((m) => m.external_id === fundingMethod)) {
          throw new DomainError('invalid_request', 'the customer has no such funding method at the partner', 'source_funding_method_external_id');
        }
        const commandId = derivedUuid('payment.create', accountId, request.idempotencyKey!);
        const create: PaymentCreate = {
          payment_id: derivedUuid('payment', commandId), customer_id: customer.id, partner, kind: 'add_funds', amount: amount.toFixed(), currency,
          idempotency_key: request.idempotencyKey!, funding_method_external_id: fundingMethod,
        };
        const created = await ledger.execute('payment.create', commandId, accountId, create, replyTimeoutMs);
        if (!created) return pendingAnswer(create.payment_id);
        if (created.kind === 'refused') return refusalAnswer(created);
        if (created.kind !== 'payment') return unexpectedOutcome(created);
        // A repeated request finds the payment as it is now; only a payment not yet accepted by the partner is submitted (again).
        const current = (await reads.byId(create.payment_id)) ?? created.payment;
        if (current.status !== 'pending') return { status: 201, body: paymentView(current) };
        let submitted: PartnerPayment;
        try {
          submitted = await links.withToken(link, (token) => clients(partner).submitPaymentAs(token, {
            reference: current.id, amount: formatAmount(current.amount, currency), currency,
            metadata: { payment_id: current.id, funding_method: fundingMethod }, ...(request.sandboxScenario ? { scenario: request.sandboxScenario } : {}),
          }));
        } catch (error) {
          if (!isPartnerError(error)) throw error;
          if (error.kind === 'unavailable') {
            throw new DomainError('partner_unavailable', `${partner} is unavailable; nothing moved: retry with the same Idempotency-Key, with exponential backoff`, current.id);
          }
          if (error.kind === 'declined' || error.kind === 'rejected') {
            const failed = await record(current, { status: 'failed', external_id: null, claim_link: null, failure_code: 'partner_declined', failure_message: error.message });
            return { status: 201, body: paymentView(failed) };
          }
          throw new DomainError('partner_error', `${partner} answered unexpectedly; the payment may or may not have been made: check GET /v1/payments/${current.id}`, current.id);
        }
        const status = submitted.status === 'reversed' ? 'failed' : submitted.status === 'pending' ? 'sent' : submitted.status;
        const updated = await record(current, { status, external_id: submitted.id, claim_link: submitted.claim_link ?? null, failure_code: status === 'failed' ? 'partner_reversed' : null, failure_message: null });
        return paymentAnswer({ kind: 'payment', created: true, payment: updated });
      },
    }),
    {
      method: 'GET', path: '/v1/payments', operationId: 'listPayments', tag: 'payments',
      summary: 'The account\'s payments, newest first', auth: { kind: 'key', scope: 'payments:read' },
      query: listQuerySchema({
        customer_id: { type: 'string', format: 'uuid' }, status: { type: 'string', enum: [...PAYMENT_STATUSES] },
        account_id: { type: 'string', format: 'uuid', description: 'master key only' },
      }),
      response: { status: 200, description: 'a page of payments', schema: listResponseSchema(paymentSchema) },
      handler: async (request) => {
        const { customer_id: customerId, status } = request.query;
        return { status: 200, body: await reads.page(actingAccountId(request), { customerId, status }, request.query, paymentView) };
      },
    },
    {
      method: 'GET', path: '/v1/payments/{id}', operationId: 'getPayment', tag: 'payments',
      summary: 'One payment, with its status history', auth: { kind: 'key', scope: 'payments:read' },
      params: { type: 'object', properties: { id: { type: 'string', format: 'uuid' } } },
      response: {
        status: 200, description: 'the payment',
        schema: { ...paymentSchema, required: [...paymentSchema.required, 'status_history'], properties: { ...paymentSchema.properties, status_history: { type: 'array', items: { type: 'object', required: ['from', 'to', 'at'], properties: { from: nullable('string'), to: { type: 'string' }, at: { type: 'string' } } } } } },
      },
      errors: ['payment_not_found'],
      handler: async (request) => {
        const payment = await reads.byId(request.params.id);
        if (!payment) throw new DomainError('payment_not_found', 'no such payment', request.params.id);
        assertOwnResource(request, payment.account_id, payment.id);
        return { status: 200, body: { ...paymentView(payment), status_history: payment.status_history } };
      },
    },
  ];
}
