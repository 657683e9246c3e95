// A secret is shown once and kept nowhere in clear: an API key's full text, a webhook signing
// secret, the OAuth `state` of a consent URL, tokens and passwords. What the service keeps of an
// answer or a request (idempotent answers in Postgres and Redis, request logs) goes through here
// first. Anyone who can read what is kept (a request log reader, a key replaying the same
// Idempotency-Key, an operator reading Redis) could otherwise use the secret as its owner.

/** What a redacted value reads as; in a URL's query it is the encoded form of the same text. */
export const REDACTED = '[redacted]';
const REDACTED_IN_URL = encodeURIComponent(REDACTED);

/** The header a replay carries when the answer it repeats had a secret, now redacted. */
export const SECRET_REDACTED_HEADER = 'Secret-Redacted';

/** Fields whose value is a secret whatever it holds. */
const ALWAYS_SECRET = 'password|token|secret|client_secret|access_token|refresh_token|authorization';
const ALWAYS_SECRET_FIELD = new RegExp(`^(${ALWAYS_SECRET})$`, 'i');
/** `key` names a message key on operator routes: only an API key's text (sk_, pk_, rk_) is secret there. */
const API_KEY_TEXT = /^(sk|pk|rk)_/;
/** Query parameters that carry a one-time secret: OAuth's state and code, tokens. */
const SECRET_QUERY_PARAMS = new Set(['state', 'code', 'token', 'access_token', 'refresh_token', 'client_secret', 'password', 'secret']);
const SECRET_QUERY_PARAM_IN_TEXT = /(^|[?&])(state|code|token|access_token|refresh_token|client_secret|password|secret)=/i;

/** A quick test on JSON text: none of these appears, nothing can need redaction (most bodies). */
const MAYBE_SECRET_IN_JSON = new RegExp(`"(${ALWAYS_SECRET}|key)":|[?&](state|code|token|access_token|refresh_token|client_secret|password|secret)=`, 'i');

/** A query string (without `?`) with the values of secret parameters redacted. */
export function redactedQuery(query: string): string {
  if (!SECRET_QUERY_PARAM_IN_TEXT.test(query)) return query;
  return query.split('&').map((pair) => {
    const equals = pair.indexOf('=');
    if (equals < 0) return pair;
    return SECRET_QUERY_PARAMS.has(decodeURIComponentSafe(pair.slice(0, equals)).toLowerCase()) ? `${pair.slice(0, equals + 1)}${REDACTED_IN_URL}` : pair;
  }).join('&');
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text.replaceAll('+', ' '));
  } catch {
    return text;
  }
}

/** A URL with the values of its secret query parameters redacted; other text as it is. */
export function redactedUrl(text: string): string {
  const question = text.indexOf('?');
  if (question < 0) return text;
  const hash = text.indexOf('#', question);
  const end = hash < 0 ? text.length : hash;
  return `${text.slice(0, question + 1)}${redactedQuery(text.slice(question + 1, end))}${text.slice(end)}`;
}

const looksLikeUrl = (text: string): boolean => /^https?:\/\//i.test(text);

/**
 * The JSON replacer that redacts: secret fields at any depth, an API key's text under `key`,
 * and secret query parameters of any URL value. `everyKey` redacts every `key` field (logs,
 * where a message key is no loss).
 */
function replacer(everyKey: boolean) {
  return (name: string, inner: unknown): unknown => {
    if (name === '') return inner;
    if (ALWAYS_SECRET_FIELD.test(name)) return inner === null ? null : REDACTED;
    if (/^key$/i.test(name) && (everyKey ? inner !== null : typeof inner === 'string' && API_KEY_TEXT.test(inner))) return REDACTED;
    if (typeof inner === 'string' && looksLikeUrl(inner)) return redactedUrl(inner);
    return inner;
  };
}

/** JSON text of `value` with its secrets redacted; undefined gives null. */
export function redactedJsonText(value: unknown, options: { everyKey?: boolean } = {}): string | null {
  if (value === undefined) return null;
  // Most bodies name no secret: the native stringify, without a replacer call per value, is
  // several times faster, and a body whose text has no secret-bearing name needs nothing more.
  const plain = JSON.stringify(value);
  if (plain === undefined) return null;
  return redactedFrom(value, plain, options.everyKey ?? false);
}

function redactedFrom(value: unknown, plain: string, everyKey: boolean): string {
  if (!MAYBE_SECRET_IN_JSON.test(plain)) return plain;
  return JSON.stringify(value, replacer(everyKey));
}

/** An answer as the service keeps it: its JSON text with secrets redacted, and whether any was. */
export function keptAnswer(body: unknown): { json: string; body: unknown; redacted: boolean } {
  const value = body ?? null;
  const plain = JSON.stringify(value);
  const json = redactedFrom(value, plain, false);
  if (json === plain) return { json, body, redacted: false };
  return { json, body: JSON.parse(json), redacted: true };
}

/** Whether a kept answer had a secret redacted (its text holds the redaction mark). */
export function hasRedactions(body: unknown): boolean {
  if (body === null || typeof body !== 'object') return false;
  const json = JSON.stringify(body);
  return json.includes(`"${REDACTED}"`) || json.includes(`=${REDACTED_IN_URL}`);
}
