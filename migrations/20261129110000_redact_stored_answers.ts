// A secret is shown once and kept nowhere in clear (src/secrets.ts). Answers stored before that
// rule kept them: the full key of POST /v1/api-keys, the signing secret of POST /v1/webhooks and
// of rotate-secret, and the OAuth state in a partner link's authorize_url; request logs kept that
// URL and the partner's redirect query (state and code). This redacts them where they lie, with
// the same marks the service now writes ("[redacted]", in a URL its encoded form).
import type { Knex } from 'knex';

const MARK = '"[redacted]"';
const MARK_IN_URL = '%5Bredacted%5D';
/** The query parameters of a URL that carry a one-time secret. */
const URL_SECRET = `([?&](state|code|token|access_token|refresh_token|client_secret|password|secret)=)[^&#"]*`;

export async function up(knex: Knex): Promise<void> {
  // Idempotent answers: the routes that make a secret answer it at the top of their body.
  await knex.raw(`UPDATE idempotency_records SET response_body = jsonb_set(response_body, '{key}', '${MARK}'::jsonb)
    WHERE jsonb_typeof(response_body) = 'object' AND response_body->>'key' ~ '^(sk|pk|rk)_'`);
  await knex.raw(`UPDATE idempotency_records SET response_body = jsonb_set(response_body, '{secret}', '${MARK}'::jsonb)
    WHERE jsonb_typeof(response_body) = 'object' AND jsonb_typeof(response_body->'secret') = 'string' AND response_body->>'secret' <> '[redacted]'`);
  await knex.raw(`UPDATE idempotency_records
    SET response_body = jsonb_set(response_body, '{authorize_url}', to_jsonb(regexp_replace(response_body->>'authorize_url', ?, ?, 'gi')))
    WHERE jsonb_typeof(response_body) = 'object' AND response_body->>'authorize_url' ~* ?`, [URL_SECRET, `\\1${MARK_IN_URL}`, URL_SECRET]);
  // Request logs: the partner link's answer (its body's other secrets were redacted already) and the callback's query.
  await knex.raw(`UPDATE request_logs SET response_body = jsonb_set(response_body, '{authorize_url}', to_jsonb(regexp_replace(response_body->>'authorize_url', ?, ?, 'gi')))
    WHERE method = 'POST' AND path LIKE '/v1/customers/%/partner-links' AND jsonb_typeof(response_body) = 'object' AND response_body->>'authorize_url' ~* ?`,
  [URL_SECRET, `\\1${MARK_IN_URL}`, URL_SECRET]);
  await knex.raw(`UPDATE request_logs SET query = regexp_replace(query, ?, ?, 'gi') WHERE ('&' || query) ~* ?`,
    [`((^|&)(state|code|token|access_token|refresh_token|client_secret|password|secret)=)[^&]*`, `\\1${MARK_IN_URL}`, URL_SECRET]);
}

export async function down(): Promise<void> {
  // A redacted secret cannot be brought back, nor should it be.
}
