// What a partner says is outside input, screened as API input is (src/http/body.ts) before it
// goes into a ledger command or a record. Postgres refuses NUL in text and jsonb, and an unpaired
// UTF-16 surrogate in jsonb: one such character in a partner's failure message failed the
// ledger's write, the command went to the dead-letter topic, and the transfer or payment stayed
// open with its funds held. Free text (messages, labels) is cleaned and bounded; identifiers,
// codes and links must have their shape, or the answer is not one we can use (the client then
// raises an unexpected answer of its own wording).

/** The most of a partner's free text kept, in characters (an ellipsis ends text that was cut). */
export const PARTNER_TEXT_CHARS_MAX = 300;

// C0 and C1 control characters (NUL, escapes, line breaks) and the line and paragraph separators.
const CONTROL_RUNS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g;
const ID = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;
const CODE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const TX_HASH = /^(0x)?[0-9a-fA-F]{16,128}$/;
const DECIMAL = /^-?\d{1,30}(\.\d{1,18})?$/;
const CURRENCY = /^[A-Z0-9]{3,10}$/;
const URL_CHARS_MAX = 2_048;

/** Cuts to at most `max` characters, never between the two halves of a surrogate pair. */
function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  const end = /[\ud800-\udbff]/.test(text[max - 1]) ? max - 1 : max;
  return text.slice(0, end);
}

/**
 * A partner's free text as we keep it: control characters become spaces, unpaired surrogates
 * U+FFFD, runs of white space one space, and at most `charsMax` characters. Only a bounded start
 * of a long text is looked at.
 */
export function screenedText(text: string, charsMax = PARTNER_TEXT_CHARS_MAX): string {
  const head = cut(text, charsMax * 4).toWellFormed();
  const clean = head.replace(CONTROL_RUNS, ' ').replace(/\s+/g, ' ').trim();
  return clean.length > charsMax || head.length < text.length ? `${cut(clean, charsMax - 1).trimEnd()}…` : clean;
}

/** A partner's free text, or null when it sent none (or nothing readable). */
export function screenedTextOrNull(value: unknown, charsMax = PARTNER_TEXT_CHARS_MAX): string | null {
  if (typeof value !== 'string') return null;
  const text = screenedText(value, charsMax);
  return text === '' ? null : text;
}

const matching = (pattern: RegExp) => (value: unknown): string | null => (typeof value === 'string' && pattern.test(value) ? value : null);

/** An identifier or reference of the partner's (a payment id, a statement line id): letters, digits, `_.:-`, at most 128. */
export const screenedId = matching(ID);
/** An error code of the partner's (`declined`, `invalid_token`). */
export const screenedCode = matching(CODE);
/** A transaction hash: hex, with or without 0x. */
export const screenedTxHash = matching(TX_HASH);
/** A decimal amount as text. */
export const screenedDecimal = matching(DECIMAL);
/** A currency code. */
export const screenedCurrency = matching(CURRENCY);

/** An http(s) link of bounded length without control characters or spaces (a claim link). */
export function screenedUrl(value: unknown): string | null {
  if (typeof value !== 'string' || value.length > URL_CHARS_MAX || !value.isWellFormed() || /[\s\u0000-\u001f\u007f-\u009f]/.test(value)) return null;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:' ? value : null;
  } catch {
    return null;
  }
}

/** An instant as ISO 8601 text. */
export function screenedInstant(value: unknown): string | null {
  return typeof value === 'string' && value.length <= 40 && !Number.isNaN(Date.parse(value)) ? value : null;
}
