// A pending partner link keeps its consent page's OAuth state sealed (src/vault.ts) beside its
// hash: the answer kept under the creation's Idempotency-Key has the state redacted, and a client
// whose first answer was lost, retrying under the key, got a consent page that could never link
// (simulation seed 18). The replay now gives the page again while the link waits for consent
// (src/partner-links/links.ts consentPage); the sealed state is forgotten once the link moves on.
// Links made before have none: their replay stays redacted.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE partner_links ADD COLUMN state_sealed text');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE partner_links DROP COLUMN state_sealed');
}
