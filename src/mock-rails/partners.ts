// How the mock rails behave as each partner of the registry (src/partners/registry.ts). Each
// lives under its own path prefix with its own token space.
import type { PartnerSlug } from '../partners/registry';

export type PaymentStatus = 'pending' | 'authorized' | 'completed' | 'reversed' | 'expired';

export interface PartnerProfile {
  slug: PartnerSlug;
  /** How the partner names itself to people (its consent page). */
  displayName: string;
  currencies: readonly string[];
  /** Status in the submit response of a payment without a sandbox scenario. */
  submitStatus: PaymentStatus;
  /**
   * Status a normal payment reaches chainConfirmMs after submission, or null when it does not
   * move by time alone (fiat is already final; claimless waits for the payee to claim).
   */
  settledStatus: PaymentStatus | null;
  /** The chain partner answers with a transaction hash. */
  issuesTxHash: boolean;
  /** The claimless partner answers with a link the payee opens to claim the funds. */
  issuesClaimLink: boolean;
  /** The client's own account and user on this partner (client-credentials tokens). */
  clientAccountId: number;
  /** What a user's funding methods are on this partner: one per currency it carries. */
  fundingKind: 'bank' | 'viban' | 'wallet';
}

/** A source of funds a user holds on the partner. */
export interface FundingMethod { external_id: string; kind: 'bank' | 'viban' | 'wallet'; currency: string; label: string; default: boolean }

/** A user's funding methods: one per currency, the first the default; the same for the same user. */
export function fundingMethodsOf(profile: PartnerProfile, userId: number): FundingMethod[] {
  return profile.currencies.map((currency, i) => ({
    external_id: `fm_${profile.slug}_${userId}_${currency.toLowerCase()}`, kind: profile.fundingKind, currency,
    label: `${profile.displayName} ${profile.fundingKind} in ${currency} ••••${String(1000 + ((userId * 7 + i) % 9000)).slice(-4)}`,
    default: i === 0,
  }));
}

const FIAT_CURRENCIES = ['USD', 'EUR', 'GBP'] as const;
const STABLECOIN_CURRENCIES = ['USDC', 'EURC'] as const;

export const PARTNERS: Readonly<Record<PartnerSlug, PartnerProfile>> = {
  // Fiat payouts: instant, final in the submit response.
  fiat: {
    slug: 'fiat', displayName: 'Fiat Rail Bank', currencies: FIAT_CURRENCIES, submitStatus: 'completed', settledStatus: null,
    issuesTxHash: false, issuesClaimLink: false, clientAccountId: 1001, fundingKind: 'viban',
  },
  // Stablecoins on a simulated chain: pending until the transaction confirms.
  chain: {
    slug: 'chain', displayName: 'Chain Rail', currencies: STABLECOIN_CURRENCIES, submitStatus: 'pending', settledStatus: 'completed',
    issuesTxHash: true, issuesClaimLink: false, clientAccountId: 1002, fundingKind: 'wallet',
  },
  // Claimless payouts: pending until the payee opens the claim link.
  claimless: {
    slug: 'claimless', displayName: 'Claimless Pay', currencies: FIAT_CURRENCIES, submitStatus: 'pending', settledStatus: null,
    issuesTxHash: false, issuesClaimLink: true, clientAccountId: 1003, fundingKind: 'wallet',
  },
  // Open-banking pay-ins (add funds): authorized by the customer's bank, settled later.
  openbank: {
    slug: 'openbank', displayName: 'OpenBank Pay-ins', currencies: FIAT_CURRENCIES, submitStatus: 'authorized', settledStatus: 'completed',
    issuesTxHash: false, issuesClaimLink: false, clientAccountId: 1004, fundingKind: 'bank',
  },
};

/** Decimal places an amount may carry in `currency`: stablecoins have 6, fiat has 2. */
export function currencyScale(currency: string): number {
  return (STABLECOIN_CURRENCIES as readonly string[]).includes(currency) ? 6 : 2;
}
