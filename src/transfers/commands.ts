// A transfer as a client asks for it (SPEC.md section 1): the body's schema, shared by single
// transfers, batches and hold captures, and the ledger command it becomes.
import { MAIN_WALLET } from '../../ledger/chart';
import { conversionRules, isSupportedPair } from '../../ledger/fx-rates';
import type { TransferCreate } from '../../ledger/commands/transfer-create';
import { metadataSchema, type Metadata } from '../../ledger/metadata';
import { amountScaleRule, amountSchema, currencySchema, parseAmount, requireCurrency } from '../../ledger/money';
import { countryCodeSchema } from '../countries';
import { DomainError } from '../domain-error';
import type { BodyOf } from '../http/route';
import { walletSideSchema } from '../http/validation';

export const emailSchema = { type: 'string', format: 'email', maxLength: 254 } as const;

export const bankSchema = {
  type: 'object', additionalProperties: false, required: ['country', 'bank_name', 'account_number', 'currency'],
  properties: {
    country: countryCodeSchema,
    bank_name: { type: 'string', minLength: 1, maxLength: 200 },
    account_number: { type: 'string', minLength: 4, maxLength: 64, description: 'an IBAN where applicable' },
    routing_number: { type: 'string', maxLength: 64 },
    currency: currencySchema,
  },
} as const;

export const recipientSchema = {
  type: 'object', additionalProperties: false, required: ['email', 'name', 'bank'],
  properties: { email: emailSchema, name: { type: 'string', minLength: 1, maxLength: 200 }, bank: bankSchema },
} as const;

/** Where the money comes from (DESIGN.md section 5g): a wallet of the sending account, or its main balance. */
const fromWalletSchema = walletSideSchema('"main" (the main balance, the default) or one of the account\'s open wallets (a UUID in lower case): the amount comes out of its available balance, and a failed payout returns to it');

export const EITHER_FORM = 'either recipient_email (an internal transfer) or recipient with bank details (an external transfer), not both';

export const createBodySchema = {
  type: 'object', additionalProperties: false, required: ['amount', 'currency'],
  description: EITHER_FORM,
  examples: [{ recipient_email: 'friend@example.com', amount: '10.00', currency: 'USD', note: 'dinner', metadata: { order_id: 'A-17' } }],
  // Exactly one form: without recipient, recipient_email is required; with it, recipient is not allowed.
  allOf: [
    { if: { not: { required: ['recipient'] } }, then: { required: ['recipient_email'], 'x-message': `give ${EITHER_FORM}` } },
    { if: { required: ['recipient_email'] }, then: { not: { required: ['recipient'] }, 'x-message': `give ${EITHER_FORM}`, 'x-field': 'recipient' } },
    amountScaleRule(),
    ...conversionRules('currency', ['recipient', 'bank', 'currency'], true),
  ],
  properties: {
    recipient_email: emailSchema,
    recipient: recipientSchema,
    amount: amountSchema,
    currency: currencySchema,
    note: { type: 'string', maxLength: 500 },
    metadata: metadataSchema,
    from_wallet_id: fromWalletSchema,
    account_id: { type: 'string', format: 'uuid', description: 'master key only' },
  },
} as const;

export type CreateTransferBody = BodyOf<typeof createBodySchema>;

/** Detects the transfer type from the body shape (SPEC.md section 1) and validates that shape. */
export function transferCommand(body: CreateTransferBody, transferId: string): TransferCreate {
  const currency = requireCurrency(body.currency);
  const amount = parseAmount(body.amount, currency);
  const hasEmail = body.recipient_email !== undefined;
  const hasBank = body.recipient !== undefined;
  if (hasEmail === hasBank) {
    throw new DomainError('invalid_request', 'give either recipient_email (internal transfer) or recipient with bank details (external transfer)', hasEmail ? 'recipient' : 'recipient_email');
  }
  const fromWallet = body.from_wallet_id === undefined || body.from_wallet_id === MAIN_WALLET ? {} : { from_wallet_id: body.from_wallet_id };
  // Metadata only when given: a batch's command weighs what its items carry (transfer-batches/routes.ts).
  const metadata = body.metadata === undefined ? {} : { metadata: body.metadata as Metadata };
  const base = { transfer_id: transferId, amount: amount.toFixed(), currency, note: body.note ?? null, ...metadata, ...fromWallet };
  if (hasEmail) return { ...base, type: 'internal', recipient_email: body.recipient_email };
  const recipient = body.recipient!;
  const bankCurrency = requireCurrency(recipient.bank.currency, 'recipient.bank.currency');
  if (bankCurrency !== currency && !isSupportedPair(currency, bankCurrency)) {
    throw new DomainError('unsupported_pair', `${currency} cannot be paid out in ${bankCurrency}; USD, EUR and GBP convert among themselves`, 'recipient.bank.currency');
  }
  return { ...base, type: 'external', recipient };
}
