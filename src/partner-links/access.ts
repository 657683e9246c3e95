// The partners as this service calls them: one OAuth client per partner (the client's own
// credentials) and the customers' links, whose tokens those clients obtain and refresh.
import type { Config } from '../config';
import type { Db } from '../db';
import { PartnerClient, type PartnerClientOptions } from '../partners/client';
import { PARTNER_LINK_CALLBACK_PATH, PARTNER_SLUGS, type PartnerSlug } from '../partners/registry';
import { SecretVault } from '../vault';
import { PartnerLinks } from './links';

export interface PartnerAccess {
  links: PartnerLinks;
  clients: (partner: PartnerSlug) => PartnerClient;
}

/**
 * `railsUrl`: where the partners live; `publicUrl`: how they reach this API's callback;
 * `calls`: how the clients time out and retry (PartnerClient's defaults otherwise).
 */
export function partnerAccess(
  config: Config, db: Db, railsUrl: string, publicUrl: () => string,
  calls: Pick<PartnerClientOptions, 'timeoutMs' | 'attemptsMax' | 'backoffMsMax'> = {},
): PartnerAccess {
  const byPartner = new Map(PARTNER_SLUGS.map((slug) => [slug, new PartnerClient({
    baseUrl: `${railsUrl}/${slug}`, clientId: config.partnerClientId, clientSecret: config.partnerClientSecret, ...calls,
  })]));
  const clients = (slug: PartnerSlug) => byPartner.get(slug)!;
  const links = new PartnerLinks(db, new SecretVault(config.partnerTokenSecret, 'partner-token-vault'), {
    clientId: config.partnerClientId,
    partnerUrl: (slug) => `${railsUrl}/${slug}`,
    redirectUri: () => `${publicUrl()}${PARTNER_LINK_CALLBACK_PATH}`,
    clients,
  });
  return { links, clients };
}
