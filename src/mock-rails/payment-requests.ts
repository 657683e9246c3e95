// What a partner takes in a request for a payment or a return of one (payments.ts): its shape, its
// currency and scale, and a repeated reference that must name the same amount.
import BigNumber from 'bignumber.js';
import { RailError } from './http';
import { isSandboxScenario, SANDBOX_SCENARIOS, type SandboxScenario } from '../partners/scenarios';
import { currencyScale, type PartnerProfile } from './partners';

export const REFERENCE_LENGTH_MAX = 128;
const DECIMAL_AMOUNT = /^\d{1,20}(?:\.\d{1,18})?$/;
const CURRENCY_CODE = /^[A-Z]{3,4}$/;

export interface SubmitRequest {
  reference: string;
  amount: string;
  currency: string;
  scenario: SandboxScenario | null;
  beneficiary: object | null;
  metadata: object | null;
}

function isPlainObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function invalid(message: string): RailError {
  return new RailError(400, 'invalid_request', message);
}

export function parseSubmit(body: Record<string, unknown>): SubmitRequest {
  const { reference, amount, currency, beneficiary, metadata, scenario } = body;
  if (typeof reference !== 'string' || reference.length === 0 || reference.length > REFERENCE_LENGTH_MAX) {
    throw invalid(`reference must be a string of 1 to ${REFERENCE_LENGTH_MAX} characters`);
  }
  if (typeof amount !== 'string' || !DECIMAL_AMOUNT.test(amount)) {
    throw invalid('amount must be a decimal string such as "10.00"');
  }
  if (!new BigNumber(amount).isGreaterThan(0)) throw invalid('amount must be greater than zero');
  if (typeof currency !== 'string' || !CURRENCY_CODE.test(currency)) {
    throw invalid('currency must be an upper-case currency code such as "USD"');
  }
  if (beneficiary !== undefined && !isPlainObject(beneficiary)) throw invalid('beneficiary must be an object');
  if (metadata !== undefined && !isPlainObject(metadata)) throw invalid('metadata must be an object');
  if (scenario !== undefined && !isSandboxScenario(scenario)) throw invalid(`scenario must be one of ${SANDBOX_SCENARIOS.join(', ')}`);
  return {
    reference, amount, currency, scenario: scenario ?? null,
    beneficiary: (beneficiary as object | undefined) ?? null, metadata: (metadata as object | undefined) ?? null,
  };
}

/** The request's amount, in a currency the partner carries (400 unsupported_currency) at that currency's scale (400 invalid_request). */
export function amountOf(profile: PartnerProfile, request: SubmitRequest): BigNumber {
  if (!profile.currencies.includes(request.currency)) {
    throw new RailError(400, 'unsupported_currency', `${profile.slug} does not handle ${request.currency}`);
  }
  const amount = new BigNumber(request.amount);
  const scale = currencyScale(request.currency);
  if ((amount.decimalPlaces() ?? 0) > scale) throw invalid(`${request.currency} amounts have at most ${scale} decimal places`);
  return amount;
}

/** What a repeated reference answers: the payment made under it, when the request names its amount and currency; else 409 reference_conflict. */
export function replay<V extends { amount: string; currency: string }>(view: V, request: SubmitRequest, amount: BigNumber): V {
  if (view.currency !== request.currency || !amount.isEqualTo(view.amount)) {
    throw new RailError(409, 'reference_conflict', `reference ${request.reference} was used for ${view.amount} ${view.currency}`);
  }
  return view;
}
