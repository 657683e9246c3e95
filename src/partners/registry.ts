// The outside partners this service pays through (DESIGN.md section 5, Partners; SPEC.md
// section 1, sandbox routing). The dispatcher names them; the mock rails (src/mock-rails) are one
// implementation of their side, with a behaviour profile per partner.

export const PARTNER_SLUGS = ['fiat', 'chain', 'claimless', 'openbank'] as const;
export type PartnerSlug = (typeof PARTNER_SLUGS)[number];

export function isPartnerSlug(value: string): value is PartnerSlug {
  return (PARTNER_SLUGS as readonly string[]).includes(value);
}

/** Where a partner sends the customer's browser back after consent (the three-legged flow). */
export const PARTNER_LINK_CALLBACK_PATH = '/v1/partner-links/callback';

/** The partners that bring money in (add funds), and the currencies each carries. */
export const PAY_IN_CURRENCIES: Partial<Record<PartnerSlug, readonly string[]>> = { openbank: ['USD', 'EUR', 'GBP'] };

/**
 * What each partner pays out (DESIGN.md section 5c): the payment kind, the currencies it carries
 * and the payee countries it serves (its corridors); null: every country. openbank pays nothing out.
 */
export const PAYOUT_CORRIDORS: Partial<Record<PartnerSlug, { kind: 'send' | 'claimless'; currencies: readonly string[]; countries: readonly string[] | null }>> = {
  fiat: { kind: 'send', currencies: ['USD', 'EUR', 'GBP'], countries: ['AT', 'BE', 'DE', 'ES', 'FR', 'GB', 'IE', 'IT', 'NL', 'PT', 'US'] },
  claimless: { kind: 'claimless', currencies: ['USD', 'EUR', 'GBP'], countries: ['CA', 'DE', 'ES', 'FR', 'GB', 'IE', 'IT', 'NL', 'US'] },
  chain: { kind: 'send', currencies: ['USDC', 'EURC'], countries: null },
};
