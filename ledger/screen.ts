// What the ledger accepts in a command before it reads or locks anything for it: ids in their one
// canonical form, text Postgres can store, amounts as decimal text, known currencies. The API
// checks the same at the edge; the ledger checks again because a command is decided in a round
// with others, and one value Postgres refuses would fail the whole round. A command that fails
// here is refused alone, with a final answer, and the rest of its round goes on.
// Each command's module (ledger/commands) declares what its payload must hold (PayloadShape)
// and checks what is its own in its parse; this module holds what every command shares.
import { metadataProblem } from './metadata';
import { isCurrency } from './money';
import { refused, type Refused } from './outcome';

/** The one form of a UUID the ledger stores and compares: lower-case, hyphenated, nothing around it. */
const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export const isCanonicalUuid = (value: unknown): value is string => typeof value === 'string' && CANONICAL_UUID.test(value);

/**
 * Why a text cannot be stored, or null: Postgres refuses the NUL character in text and JSON, and
 * an unpaired UTF-16 surrogate in JSON (`"\ud800"`), so such a value would fail deep in a write.
 */
export function unstorable(text: string): string | null {
  if (text.includes('\u0000')) return 'contains a NUL character (\\u0000)';
  if (!text.isWellFormed()) return 'contains an unpaired UTF-16 surrogate';
  return null;
}

/** The first value (key or string) under `value` Postgres cannot store, with its dotted path; null when there is none. */
export function firstUnstorable(value: unknown, location: string): { path: string; reason: string } | null {
  const pending: Array<[unknown, string]> = [[value, '']];
  while (pending.length > 0) {
    const [item, path] = pending.pop()!;
    if (typeof item === 'string') {
      const reason = unstorable(item);
      if (reason) return { path: path || location, reason };
    } else if (item !== null && typeof item === 'object') {
      for (const [key, inner] of Object.entries(item)) {
        const innerPath = path ? `${path}.${key}` : key;
        const keyReason = unstorable(key);
        if (keyReason) return { path: path || location, reason: `has a field name that ${keyReason}` };
        pending.push([inner, innerPath]);
      }
    }
  }
  return null;
}

const DECIMAL = /^-?(0|[1-9][0-9]{0,30})(\.[0-9]{1,18})?$/;
/** An amount as a command carries it: decimal text (its sign and scale are the command's to check). */
export const DECIMAL_AMOUNT = DECIMAL;

/**
 * What a command's payload must hold, declared by its module (ledger/commands): the fields that
 * are canonical UUIDs, amounts, currencies; whether its account is an account's UUID (a
 * partner's or finance's commands name something else); and its metadata, as set on create
 * (absent: none) or as a patch (required).
 */
export interface PayloadShape { ids: string[]; amounts: string[]; currencies: string[]; accountIsUuid: boolean; metadata?: 'create' | 'patch' }

export const invalid = (field: string, message: string): Refused => refused('invalid_request', message, field);

/**
 * Why the ledger refuses a command as it is, before deciding on it; null when it may be decided.
 * `payload` is the parsed payload; the envelope's own strings are checked by the caller.
 */
export function screenPayload(shape: PayloadShape, accountId: string, payload: unknown): Refused | null {
  if (shape.accountIsUuid && !isCanonicalUuid(accountId)) return invalid('account_id', 'account_id must be a UUID in lower case (e.g. 3f1e8c2a-5b7d-4c9e-8a1f-2d4b6c8e0a13)');
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) return invalid('payload', 'the command\'s payload must be a JSON object');
  const fields = payload as Record<string, unknown>;
  const bad = firstUnstorable(fields, 'payload');
  if (bad) return invalid(bad.path, `${bad.path} ${bad.reason}`);
  for (const field of shape.ids) {
    if (!isCanonicalUuid(fields[field])) return invalid(field, `${field} must be a UUID in lower case (e.g. 3f1e8c2a-5b7d-4c9e-8a1f-2d4b6c8e0a13)`);
  }
  for (const field of shape.amounts) {
    const amount = fields[field];
    if (typeof amount !== 'string' || !DECIMAL.test(amount)) return invalid(field, `${field} must be a decimal amount as text (e.g. "10.50")`);
  }
  for (const field of shape.currencies) {
    const currency = fields[field];
    if (typeof currency !== 'string' || !isCurrency(currency)) return invalid(field, `${field} must be a supported currency code`);
  }
  return screenMetadata(shape, fields);
}

/**
 * A command's metadata within the bounds of DESIGN.md section 5h (ledger/metadata.ts), as the API
 * checked it: an object of strings would store whatever it is, and every reader of the record
 * (its views, the list filters, the events' Avro map) takes one.
 */
function screenMetadata(shape: PayloadShape, fields: Record<string, unknown>): Refused | null {
  const patch = shape.metadata === 'patch';
  if (!patch && (shape.metadata !== 'create' || fields.metadata === undefined)) return null;
  const problem = metadataProblem(fields.metadata, patch);
  return problem ? invalid(problem.field, problem.message) : null;
}

/** A side of a wallet move: the main balance, or a wallet's id. */
export const isWalletSide = (value: unknown): boolean => value === 'main' || isCanonicalUuid(value);
/** A text field that may be left out. */
export const isTextOrNull = (value: unknown): boolean => value === null || value === undefined || typeof value === 'string';
