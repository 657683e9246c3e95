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
