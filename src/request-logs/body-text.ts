// A request or response body as it goes into a request log: secrets redacted, text Postgres can
// store, and a bounded size. SPEC.md says every request is logged: a body that cannot be kept
// whole is kept cut or cleaned, and the record says so (`truncated`), never dropped.

import { redactedJsonText } from '../redaction';

/**
 * The longest body text kept, in characters. Two bodies at three UTF-8 bytes a character stay
 * under 600 KB, well inside the broker's 1 MB message limit, with room for the rest of the record.
 */
export const LOGGED_BODY_CHARS_MAX = 100_000;

/**
 * JSON with the values of secret-bearing fields replaced, at any depth, and the secret query
 * parameters of URLs (a consent page's OAuth state); in a log every `key` field is redacted.
 */
export const redactedJson = (value: unknown): string | null => redactedJsonText(value, { everyKey: true });

// JSON.stringify writes NUL and unpaired surrogates as \u escapes, which jsonb refuses. The test
// is on the escaped text, so it may also match an escaped backslash followed by "u0000"; those
// bodies take the slower exact path below and come out unchanged.
const UNSTORABLE_ESCAPE = /\\u0000|\\ud[89a-f][0-9a-f]{2}/i;

/** Postgres cannot store NUL or an unpaired surrogate: each becomes U+FFFD. */
export const storableString = (text: string): string => text.replaceAll('\u0000', '\uFFFD').toWellFormed();

function storableJson(json: string): string {
  return JSON.stringify(JSON.parse(json), (_key, inner) => {
    if (typeof inner === 'string') return storableString(inner);
    if (inner !== null && typeof inner === 'object' && !Array.isArray(inner)) {
      return Object.fromEntries(Object.entries(inner).map(([k, v]) => [storableString(k), v]));
    }
    return inner;
  });
}

export interface LoggedBody {
  /** JSON text for a jsonb column, or null when there was no body. */
  json: string | null;
  /** True when the body was cut to LOGGED_BODY_CHARS_MAX or had characters replaced. */
  truncated: boolean;
}

/**
 * The body as the log keeps it. A body over the bound is kept as a JSON string holding the
 * first LOGGED_BODY_CHARS_MAX characters of its JSON text (still valid jsonb, plainly a prefix).
 */
export function loggedBody(value: unknown): LoggedBody {
  let json = redactedJson(value);
  if (json === null) return { json: null, truncated: false };
  let truncated = false;
  if (UNSTORABLE_ESCAPE.test(json)) {
    const cleaned = storableJson(json);
    truncated = cleaned !== json;
    json = cleaned;
  }
  if (json.length > LOGGED_BODY_CHARS_MAX) {
    return { json: JSON.stringify(storableString(json.slice(0, LOGGED_BODY_CHARS_MAX))), truncated: true };
  }
  return { json, truncated };
}
