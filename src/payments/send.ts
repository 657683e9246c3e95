// POST /v1/payments/send (SPEC.md section 4, Payments): money out of the caller's account to a
// payee, through a partner the customer is linked with. The ledger holds the amount first (422
// insufficient_funds, nothing held); fiat pays a bank payee, claimless sends the payee a claim
// link, chain pays stablecoins. Every payee field is checked before anything moves.
import type { JSONSchema } from 'json-schema-to-ts';
import type { PaymentCreate } from '../../ledger/commands/payment-create';
import { metadataSchema, type Metadata } from '../../ledger/metadata';
import { amountScaleRule, amountSchema, CURRENCIES, currencySchema, parseAmount, requireCurrency } from '../../ledger/money';
import { accountIdQuerySchema, actingAccountIdForWrite } from '../http/acting-account';
import { countryCodeSchema } from '../countries';
import { ownCustomer } from '../customers/own-customer';
import { DomainError } from '../domain-error';
import { withBody, type BodyOf, type RouteDef } from '../http/route';
import { requirePartner } from '../partner-links/links';
import { PAYOUT_CORRIDORS } from '../partners/registry';
import { paymentSchema } from './schema';
import { createAndSubmit, fundingMethodFor, paymentIds, PENDING_PAYMENT_DESCRIPTION, PENDING_PAYMENT_SCHEMA, provisionalPayment, type PaymentRouteDeps } from './submission';

const text = (maxLength: number) => ({ type: 'string', minLength: 1, maxLength } as const);
const PHONE_RULE = 'give both phone_country_code and phone_number, or neither';
const payeeSchema = {
  type: 'object', additionalProperties: false, required: ['email', 'first_name', 'last_name', 'country_code', 'kind'],
  // The rules across the payee's fields (checkPayee checks them again).
  allOf: [
    { if: { required: ['phone_number'] }, then: { required: ['phone_country_code'], 'x-message': PHONE_RULE } },
    { if: { required: ['phone_country_code'] }, then: { required: ['phone_number'], 'x-message': PHONE_RULE } },
    { if: { properties: { kind: { const: 'business' } }, required: ['kind'] }, then: { required: ['business'], 'x-message': 'a business payee needs payee.business' } },
  ],
  properties: {
    email: { type: 'string', format: 'email', maxLength: 254 }, first_name: text(100), last_name: text(100), country_code: countryCodeSchema,
    phone_country_code: { type: 'string', pattern: '^\\+[0-9]{1,4}$', description: 'dialling prefix with plus sign; with phone_number, or neither', examples: ['+44'] },
    phone_number: { type: 'string', pattern: '^[0-9 ]{4,20}$', description: 'with phone_country_code, or neither', examples: ['7700 900123'] },
    kind: { type: 'string', enum: ['personal', 'business'] },
    business: {
      type: 'object', additionalProperties: false, required: ['business_name'],
      properties: {
        business_name: text(200), industry: text(100), sub_industry: text(100), entity: text(100), tax_id_number: text(50),
        address: {
          type: 'object', additionalProperties: false, required: ['country_code', 'street', 'city', 'postal_code'],
          properties: { country_code: countryCodeSchema, street: text(200), city: text(100), province: text(100), postal_code: text(20) },
        },
      },
    },
    bank: {
      type: 'object', additionalProperties: false, required: ['iso_country_code', 'bank_name', 'currency_code', 'bank_account_number'],
      properties: {
        iso_country_code: countryCodeSchema, bank_name: text(200), currency_code: currencySchema, bank_account_number: { type: 'string', minLength: 4, maxLength: 64 },
        routing_number: text(64),
      },
    },
  },
} as const;

const FIAT_NEEDS_BANK = { 'x-message': 'a fiat payout needs payee.bank' };

/** Each corridor of PAYOUT_CORRIDORS as a rule of the body: the partner's currencies and countries. */
function corridorRules(): JSONSchema[] {
  return Object.entries(PAYOUT_CORRIDORS).map(([partner, corridor]): JSONSchema => {
    const countries = corridor.countries && { enum: corridor.countries, 'x-error': 'corridor_unavailable', description: `a country ${partner} pays out to: ${corridor.countries.join(', ')}` };
    const currencies = { enum: corridor.currencies, 'x-error': 'invalid_currency' };
    const payee: Record<string, JSONSchema> = countries === null ? {} : partner === 'fiat'
      ? { payee: { type: 'object', required: ['bank'], ...FIAT_NEEDS_BANK, properties: { bank: { type: 'object', properties: { iso_country_code: { type: 'string', ...countries } } } } } }
      : { payee: { type: 'object', properties: { country_code: { type: 'string', ...countries } } } };
    return {
      if: { properties: { partner: { const: partner } }, required: ['partner'] },
      then: { properties: { currency: { type: 'string', ...currencies, description: `a currency ${partner} carries: ${corridor.currencies.join(', ')}` }, ...payee } },
    };
  });
}

const BANK_CURRENCY_ERROR = { 'x-error': 'invalid_currency', 'x-message': 'payee.bank.currency_code must be the payment\'s currency' };
/** A payee's bank account is in the payment's currency. */
const BANK_IN_PAYMENT_CURRENCY = CURRENCIES.map((currency): JSONSchema => ({
  if: { properties: { currency: { const: currency } }, required: ['currency'] },
  then: {
    properties: {
      payee: {
        type: 'object',
        properties: { bank: { type: 'object', properties: { currency_code: { const: currency, ...BANK_CURRENCY_ERROR } } } },
      },
    },
  },
}));

const sendBodySchema = {
  type: 'object', additionalProperties: false, required: ['customer_id', 'partner', 'amount', 'currency', 'purpose', 'payee'],
  description: 'a fiat payout needs payee.bank, in the payment\'s currency; a business payee needs payee.business (its tax_id_number, else 403 requires_action)',
  examples: [{
    customer_id: '3f1e8c2a-5b7d-4c9e-8a1f-2d4b6c8e0a13', partner: 'claimless', amount: '25.00', currency: 'EUR', purpose: 'invoice 7',
    payee: { email: 'payee@example.com', first_name: 'Ada', last_name: 'Lovelace', country_code: 'DE', kind: 'personal' },
  }],
  // What each partner carries and where it pays out (PAYOUT_CORRIDORS); fiat amounts have 2 decimals.
  allOf: [amountScaleRule(), ...corridorRules(), ...BANK_IN_PAYMENT_CURRENCY],
  properties: {
    customer_id: { type: 'string', format: 'uuid' }, partner: { type: 'string', enum: ['fiat', 'claimless', 'chain'], 'x-error': 'invalid_partner', description: 'fiat (bank payee), claimless (claim link) or chain (stablecoins)' },
    account_id: accountIdQuerySchema,
    amount: amountSchema, currency: currencySchema, purpose: text(200),
    source_funding_method_external_id: { type: 'string', minLength: 1, maxLength: 200, description: 'optional: the customer\'s default funding method in the currency otherwise' },
    source_funding_method_kind: { type: 'string', enum: ['wallet', 'bank', 'viban'] },
    payee: payeeSchema, metadata: metadataSchema,
  },
} as const;

type Payee = BodyOf<typeof payeeSchema>;

/** What the partner needs that the body's shape cannot say. @throws DomainError */
function checkPayee(partner: string, currency: string, payee: Payee): string {
  if ((payee.phone_country_code === undefined) !== (payee.phone_number === undefined)) {
    throw new DomainError('invalid_request', 'give both phone_country_code and phone_number, or neither', payee.phone_number === undefined ? 'payee.phone_number' : 'payee.phone_country_code');
  }
  if (payee.kind === 'business') {
    if (!payee.business) throw new DomainError('invalid_request', 'a business payee needs payee.business', 'payee.business');
    // A real cause the partner's compliance checks raise: it cannot pay a business it cannot identify.
    if (!payee.business.tax_id_number) throw new DomainError('requires_action', 'the partner needs the business payee\'s tax identification number', 'payee.business.tax_id_number');
  }
  if (partner !== 'fiat') return payee.country_code;
  if (!payee.bank) throw new DomainError('invalid_request', 'a fiat payout needs payee.bank', 'payee.bank');
  if (payee.bank.currency_code !== currency) throw new DomainError('invalid_currency', 'payee.bank.currency_code must be the payment\'s currency', 'payee.bank.currency_code');
  return payee.bank.iso_country_code;
}

export function sendRoute(deps: PaymentRouteDeps): RouteDef {
  const { db, links } = deps;
  return withBody(sendBodySchema, {
    method: 'POST', path: '/v1/payments/send', operationId: 'sendPayment', tag: 'payments',
    summary: 'Pay a payee from the caller\'s account through a partner the customer is linked with; the amount is held first',
    auth: { kind: 'key', scope: 'payments:write', moneyMoving: true }, idempotent: true, sandboxScenario: true,
    response: { status: 201, description: 'the payment: completed (fiat), sent with a claim_link (claimless) or sent (chain), or failed', schema: paymentSchema },
    provisional: (request) => provisionalPayment(db, deps.reads, request), provisionalSchema: PENDING_PAYMENT_SCHEMA, provisionalDescription: PENDING_PAYMENT_DESCRIPTION,
    errors: ['invalid_partner', 'invalid_currency', 'customer_not_linked', 'corridor_unavailable', 'requires_action', 'insufficient_funds', 'partner_unavailable', 'partner_error'],
    handler: async (request) => {
      const { body } = request;
      const partner = requirePartner(body.partner);
      const corridor = PAYOUT_CORRIDORS[partner];
      if (!corridor) throw new DomainError('invalid_partner', `${partner} pays nothing out; send through fiat, claimless or chain`, 'partner');
      const currency = requireCurrency(body.currency);
      if (!corridor.currencies.includes(currency)) throw new DomainError('invalid_currency', `${partner} carries ${corridor.currencies.join(', ')}`, 'currency');
      const amount = parseAmount(body.amount, currency);
      const country = checkPayee(partner, currency, body.payee);
      if (corridor.countries && !corridor.countries.includes(country)) {
        throw new DomainError('corridor_unavailable', `${partner} does not pay out to ${country}`, partner === 'fiat' ? 'payee.bank.iso_country_code' : 'payee.country_code');
      }
      const accountId = await actingAccountIdForWrite(request, db);
      const customer = await ownCustomer(db, request, body.customer_id, 'customer_id');
      const link = await links.activeLink(customer.id, partner);
      const { commandId, paymentId } = paymentIds(accountId, request.idempotencyKey!);
      const create: PaymentCreate = {
        payment_id: paymentId, customer_id: customer.id, partner, kind: corridor.kind, amount: amount.toFixed(), currency,
        idempotency_key: request.idempotencyKey!, funding_method_external_id: await fundingMethodFor(links, link, body.source_funding_method_external_id, currency),
        payee: body.payee as Record<string, unknown>, purpose: body.purpose, ...(body.metadata === undefined ? {} : { metadata: body.metadata as Metadata }),
      };
      return createAndSubmit(deps, accountId, commandId, create, link, { scenario: request.sandboxScenario });
    },
  });
}
