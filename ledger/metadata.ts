// Metadata (DESIGN.md section 5h): a client's own string values on its transfers, batch items,
// reversals, holds, payments, wallets, customers and contacts, set on create, changed by a patch (a
// key set to null is removed, the others kept), carried in events, never interpreted. The bounds
// are one rule, checked here for the API's routes (the JSON Schemas below state it to clients and
// the validation) and for the ledger (screen.ts, the decisions of transfer.update and hold.update).
// Lengths count characters (Unicode code points), as JSON Schema's maxLength does.

/** A client's metadata: at most METADATA_KEYS_MAX keys of 1..METADATA_KEY_LENGTH_MAX characters, string values. */
export type Metadata = Record<string, string>;
/** A change of metadata: a string sets its key, null removes it, an absent key is kept. */
export type MetadataPatch = Record<string, string | null>;

export const METADATA_KEYS_MAX = 50;
export const METADATA_KEY_LENGTH_MAX = 40;
export const METADATA_VALUE_LENGTH_MAX = 500;

/** What is wrong with a metadata object: the field at fault (`metadata.order_id`), and why. */
export interface MetadataProblem { field: string; message: string }

const characters = (text: string): number => [...text].length;
const isPlainObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * Why `value` is no metadata (`patch`: a patch of it, whose null values remove keys), or null. The
 * checks run in the order the API's validation reports them (Ajv's: the count, then every key's
 * length, then every value), so both name the same field: the key past the bound, the key too long
 * or empty, or the key whose value is wrong.
 */
export function metadataProblem(value: unknown, patch: boolean, location = 'metadata'): MetadataProblem | null {
  if (!isPlainObject(value)) return { field: location, message: `${location} must be an object of string values` };
  const keys = Object.keys(value);
  if (keys.length > METADATA_KEYS_MAX) {
    return { field: `${location}.${keys[METADATA_KEYS_MAX]}`, message: `${location} holds at most ${METADATA_KEYS_MAX} keys` };
  }
  const badKey = keys.find((key) => characters(key) < 1 || characters(key) > METADATA_KEY_LENGTH_MAX);
  if (badKey !== undefined) return { field: `${location}.${badKey}`, message: `a key of ${location} has 1 to ${METADATA_KEY_LENGTH_MAX} characters` };
  for (const key of keys) {
    const item = value[key];
    if (item === null && patch) continue;
    if (typeof item !== 'string') return { field: `${location}.${key}`, message: `${location}.${key} must be a string${patch ? ', or null to remove it' : ''}` };
    if (characters(item) > METADATA_VALUE_LENGTH_MAX) return { field: `${location}.${key}`, message: `${location}.${key} has at most ${METADATA_VALUE_LENGTH_MAX} characters` };
  }
  return null;
}

/**
 * `current` changed by `patch` (checked by metadataProblem): each string sets its key, each null
 * removes it. Refused when the result would hold more than METADATA_KEYS_MAX keys, naming the
 * first key the patch adds past the bound; nothing is changed then.
 */
export function patchMetadata(current: Metadata, patch: MetadataPatch, location = 'metadata'): { metadata: Metadata } | { problem: MetadataProblem } {
  // A Map, not assignments to an object: a key such as "__proto__" is a key like any other.
  const merged = new Map(Object.entries(current));
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) merged.delete(key);
    else merged.set(key, value);
  }
  if (merged.size <= METADATA_KEYS_MAX) return { metadata: Object.fromEntries(merged) };
  const added = Object.entries(patch).filter(([key, value]) => value !== null && !Object.hasOwn(current, key)).map(([key]) => key);
  const past = added[added.length - (merged.size - METADATA_KEYS_MAX)];
  return { problem: { field: `${location}.${past}`, message: `${location} would hold ${merged.size} keys: at most ${METADATA_KEYS_MAX}` } };
}

/** Metadata as stored, or none: a record written before metadata existed has none. */
export const metadataOf = (record: { metadata?: Metadata | null }): Metadata => record.metadata ?? {};

const keyName = { minLength: 1, maxLength: METADATA_KEY_LENGTH_MAX } as const;
const DESCRIPTION = `your own string values, never interpreted: at most ${METADATA_KEYS_MAX} keys of 1..${METADATA_KEY_LENGTH_MAX} characters, values of at most ${METADATA_VALUE_LENGTH_MAX}`;

/** Metadata in a create body; absent is none ({}). */
export const metadataSchema = {
  type: 'object', maxProperties: METADATA_KEYS_MAX, propertyNames: keyName,
  additionalProperties: { type: 'string', maxLength: METADATA_VALUE_LENGTH_MAX }, description: DESCRIPTION,
} as const;

/** Metadata in a PATCH body: a string sets its key, null removes it, keys not named are kept. */
export const metadataPatchSchema = {
  type: 'object', maxProperties: METADATA_KEYS_MAX, propertyNames: keyName,
  additionalProperties: { type: ['string', 'null'], maxLength: METADATA_VALUE_LENGTH_MAX },
  description: `changes to the metadata: a string sets its key, null removes it, keys not named are kept; at most ${METADATA_KEYS_MAX} keys after the change`,
} as const;

/** Metadata as every object shows it: {} when none. */
export const metadataViewSchema = { type: 'object', additionalProperties: { type: 'string' }, description: 'your own string values, as set; {} when none' } as const;

/**
 * The list filter `metadata[<key>]=<value>` (OpenAPI deepObject): the items whose metadata holds
 * every pair given, each value compared exactly.
 */
export const metadataFilterSchema = {
  type: 'object', maxProperties: METADATA_KEYS_MAX, propertyNames: keyName,
  additionalProperties: { type: 'string', maxLength: METADATA_VALUE_LENGTH_MAX },
  description: 'metadata[<key>]=<value>: only items whose metadata has each key given with exactly that value; several combine (all must hold)',
} as const;
