// A partner's answers as the client (client.ts) takes them: the shape checked, every field
// screened (screen.ts), and only the fields we know kept. An answer that does not pass is an
// unexpected answer in our own words, never passed on as it came.
import { PartnerError } from './errors';
import { screenedCurrency, screenedDecimal, screenedId, screenedInstant, screenedText, screenedTxHash, screenedUrl } from './screen';

export type PartnerPaymentStatus = 'pending' | 'authorized' | 'completed' | 'reversed' | 'expired';

export interface PartnerPayment {
  id: string;
  reference: string;
  amount: string;
  currency: string;
  status: PartnerPaymentStatus;
  created_at: string;
  tx_hash?: string;
  claim_link?: string;
  /** What the payment was told to pay with, as the partner keeps it (read back, never put into a command). */
  beneficiary?: object;
  metadata?: object;
}

const PAYMENT_STATUSES: readonly string[] = ['pending', 'authorized', 'completed', 'reversed', 'expired'];

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function unexpectedAnswer(what: string, detail: string): PartnerError {
  return new PartnerError({ kind: 'unexpected', message: `${what}: ${detail}`, httpStatus: null, partnerCode: null });
}

/**
 * The payment in a partner's answer, each field screened; only the fields we know are kept.
 * `reference`: the one we submitted, when we did.
 */
export function parsePayment(what: string, payload: unknown, reference?: string): PartnerPayment {
  const fields = ['id', 'reference', 'amount', 'currency', 'status', 'created_at'] as const;
  if (!isRecord(payload) || fields.some((field) => typeof payload[field] !== 'string')) {
    throw unexpectedAnswer(what, 'the partner answered with something that is not a payment');
  }
  if (!PAYMENT_STATUSES.includes(payload.status as string)) {
    throw unexpectedAnswer(what, `the partner answered with an unknown payment status "${screenedText(payload.status as string, 40)}"`);
  }
  const payment: PartnerPayment = {
    id: screenedId(payload.id) ?? '', reference: screenedId(payload.reference) ?? '', amount: screenedDecimal(payload.amount) ?? '',
    currency: screenedCurrency(payload.currency) ?? '', status: payload.status as PartnerPaymentStatus, created_at: screenedInstant(payload.created_at) ?? '',
  };
  const unusable = fields.find((field) => payment[field] === '')
    ?? (reference !== undefined && payment.reference !== reference ? 'reference' : undefined);
  if (unusable) throw unexpectedAnswer(what, `the partner answered with a payment whose ${unusable} we cannot use`);
  if (payload.tx_hash !== undefined && payload.tx_hash !== null) {
    payment.tx_hash = screenedTxHash(payload.tx_hash) ?? undefined;
    if (payment.tx_hash === undefined) throw unexpectedAnswer(what, 'the partner answered with a payment whose tx_hash we cannot use');
  }
  if (payload.claim_link !== undefined && payload.claim_link !== null) {
    payment.claim_link = screenedUrl(payload.claim_link) ?? undefined;
    if (payment.claim_link === undefined) throw unexpectedAnswer(what, 'the partner answered with a payment whose claim_link we cannot use');
  }
  if (isRecord(payload.beneficiary)) payment.beneficiary = payload.beneficiary;
  if (isRecord(payload.metadata)) payment.metadata = payload.metadata;
  return payment;
}
