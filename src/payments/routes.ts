// Payments through the partners (SPEC.md section 4, Payments; DESIGN.md section 5c): add funds
// (credited only when the partner settles, consumers/partners/settler.ts), send (payment-send.ts)
// and the reads. How a payment is recorded and submitted: payment-submission.ts.
import type { PaymentCreate } from '../../ledger/commands/payment-create';
import { metadataSchema, type Metadata } from '../../ledger/metadata';
import { amountScaleRule, amountSchema, parseAmount, requireCurrency } from '../../ledger/money';
import { PAYMENT_STATUSES } from '../../ledger/payments';
import { accountIdQuerySchema, actingAccountId, actingAccountIdForWrite, assertOwnResource } from '../http/acting-account';
import type { Environment } from '../config';
import { ownCustomer } from '../customers/own-customer';
import { DomainError } from '../domain-error';
import { listFilterOf, listFilterSchemas, listQuerySchema, listResponseSchema } from '../http/pagination';
import { withBody, type RouteDef } from '../http/route';
import { idParams } from '../http/validation';
import { paymentView } from '../ledger-client/answers';
import { requirePartner } from '../partner-links/links';
import { PAY_IN_CURRENCIES } from '../partners/registry';
import { nullable, paymentSchema } from './schema';
import { sendRoute } from './send';
import { paymentSimulationRoute } from './simulation';
import { createAndSubmit, fundingMethodFor, paymentIds, PENDING_PAYMENT_DESCRIPTION, PENDING_PAYMENT_SCHEMA, provisionalPayment, type PaymentRouteDeps } from './submission';


const addFundsBodySchema = {
  type: 'object', additionalProperties: false, required: ['customer_id', 'partner', 'amount', 'currency'], ...amountScaleRule(),
  properties: {
    customer_id: { type: 'string', format: 'uuid' }, partner: { type: 'string', enum: ['openbank'], 'x-error': 'invalid_partner', description: 'openbank brings funds in' },
    account_id: accountIdQuerySchema,
    amount: amountSchema,
    currency: { type: 'string', enum: [...PAY_IN_CURRENCIES.openbank!], 'x-error': 'invalid_currency', description: 'a currency openbank brings in' },
    source_funding_method_external_id: { type: 'string', minLength: 1, maxLength: 200, description: 'optional: the customer\'s default funding method in the currency otherwise' },
    metadata: metadataSchema,
  },
} as const;

export function paymentRoutes(deps: PaymentRouteDeps, environment: Environment, railsUrl: () => string, controlSecret: string): RouteDef[] {
  const { db, links, reads } = deps;
  return [
    sendRoute(deps),
    paymentSimulationRoute(deps, environment, railsUrl, controlSecret),
    withBody(addFundsBodySchema, {
      method: 'POST', path: '/v1/payments/add-funds', operationId: 'addFunds', tag: 'payments',
      summary: 'Bring money in from a linked customer\'s account at a partner; credited once the partner settles',
      auth: { kind: 'key', scope: 'payments:write', moneyMoving: true }, idempotent: true, sandboxScenario: true,
      response: { status: 201, description: 'the payment, authorized', schema: paymentSchema },
      provisional: (request) => provisionalPayment(db, deps.reads, request), provisionalSchema: PENDING_PAYMENT_SCHEMA, provisionalDescription: PENDING_PAYMENT_DESCRIPTION,
      errors: ['invalid_partner', 'invalid_currency', 'customer_not_linked', 'partner_unavailable', 'partner_error'],
      handler: async (request) => {
        const { body } = request;
        const partner = requirePartner(body.partner);
        const currencies = PAY_IN_CURRENCIES[partner];
        if (!currencies) throw new DomainError('invalid_partner', `${partner} does not bring funds in; add funds through openbank`, 'partner');
        const currency = requireCurrency(body.currency);
        if (!currencies.includes(currency)) throw new DomainError('invalid_currency', `${partner} carries ${currencies.join(', ')}`, 'currency');
        const amount = parseAmount(body.amount, currency);
        const accountId = await actingAccountIdForWrite(request, db);
        const customer = await ownCustomer(db, request, body.customer_id, 'customer_id');
        const link = await links.activeLink(customer.id, partner);
        const { commandId, paymentId } = paymentIds(accountId, request.idempotencyKey!);
        const create: PaymentCreate = {
          payment_id: paymentId, customer_id: customer.id, partner, kind: 'add_funds', amount: amount.toFixed(), currency,
          idempotency_key: request.idempotencyKey!, funding_method_external_id: await fundingMethodFor(links, link, body.source_funding_method_external_id, currency),
          ...(body.metadata === undefined ? {} : { metadata: body.metadata as Metadata }),
        };
        return createAndSubmit(deps, accountId, commandId, create, link, { scenario: request.sandboxScenario });
      },
    }),
    {
      method: 'GET', path: '/v1/payments', operationId: 'listPayments', tag: 'payments',
      summary: 'The account\'s payments, newest first; the filters combine', auth: { kind: 'key', scope: 'payments:read' },
      query: listQuerySchema({
        customer_id: { type: 'string', format: 'uuid' }, status: { type: 'string', enum: [...PAYMENT_STATUSES] }, ...listFilterSchemas('payments'),
        account_id: { type: 'string', format: 'uuid', description: 'master key only' },
      }),
      response: { status: 200, description: 'a page of payments', schema: listResponseSchema(paymentSchema) },
      handler: async (request) => {
        const { customer_id: customerId, status } = request.query;
        return { status: 200, body: await reads.page(actingAccountId(request), { ...listFilterOf(request.query), customerId, status }, request.query, paymentView) };
      },
    },
    {
      method: 'GET', path: '/v1/payments/{id}', operationId: 'getPayment', tag: 'payments',
      summary: 'One payment, with its status history', auth: { kind: 'key', scope: 'payments:read' },
      params: idParams,
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
