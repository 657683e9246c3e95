// What the ledger accepts in a command before it reads or locks anything for it: ids in their one
// canonical form, text Postgres can store, amounts as decimal text, known currencies. The API
// checks the same at the edge; the ledger checks again because a command is decided in a round
// with others, and one value Postgres refuses would fail the whole round. A command that fails
// here is refused alone, with a final answer, and the rest of its round goes on.
import { BATCH_ITEMS_MAX, type CommandType } from './messages';
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

/** The fields of each command's payload that must hold a canonical UUID, an amount, a currency. */
const SHAPES: Record<CommandType, { ids: string[]; amounts: string[]; currencies: string[]; accountIsUuid: boolean }> = {
  'faucet.credit': { ids: ['entry_id'], amounts: ['amount'], currencies: ['currency'], accountIsUuid: true },
  'transfer.create': { ids: ['transfer_id'], amounts: ['amount'], currencies: ['currency'], accountIsUuid: true },
  'transfer.partner_result': { ids: ['transfer_id'], amounts: [], currencies: [], accountIsUuid: false },
  'fx.execute': { ids: ['quote_id', 'entry_id'], amounts: [], currencies: [], accountIsUuid: true },
  'payment.create': { ids: ['payment_id', 'customer_id'], amounts: ['amount'], currencies: ['currency'], accountIsUuid: true },
  'payment.update': { ids: ['payment_id'], amounts: [], currencies: [], accountIsUuid: false },
  // Finance names the partner's settlement account (`reconciliation:<partner>`), not an account.
  'reconciliation.adjust': { ids: ['exception_id', 'entry_id'], amounts: ['amount'], currencies: ['currency'], accountIsUuid: false },
  // from_wallet_id and to_wallet_id are "main" or a wallet's id: decide-wallets.ts checks them.
  'wallet.transfer': { ids: ['wallet_transfer_id'], amounts: ['amount'], currencies: ['currency'], accountIsUuid: true },
  'hold.create': { ids: ['hold_id'], amounts: ['amount'], currencies: ['currency'], accountIsUuid: true },
  'hold.capture': { ids: ['hold_id', 'capture_id', 'transfer_id'], amounts: ['amount'], currencies: [], accountIsUuid: true },
  'hold.void': { ids: ['hold_id'], amounts: [], currencies: [], accountIsUuid: true },
  'hold.expire': { ids: ['hold_id'], amounts: [], currencies: [], accountIsUuid: true },
  // Its items are screened one by one (screenBatch).
  'transfer.batch': { ids: [], amounts: [], currencies: [], accountIsUuid: true },
  // amount may be null (what is left): ledger/commands/transfer-reverse.ts checks it.
  'transfer.reverse': { ids: ['transfer_id', 'reversal_id'], amounts: [], currencies: [], accountIsUuid: true },
  // reversal_id may be null (the transfer's own metadata): screenMetadata checks it.
  'transfer.update': { ids: ['transfer_id'], amounts: [], currencies: [], accountIsUuid: true },
  'hold.update': { ids: ['hold_id'], amounts: [], currencies: [], accountIsUuid: true },
  // A partner dispatcher's, as transfer.partner_result is.
  'transfer.return_result': { ids: ['transfer_id', 'reversal_id'], amounts: [], currencies: [], accountIsUuid: false },
};

/** The commands that carry metadata: as set on create (absent: none), or as a patch (required). */
const CREATES_METADATA: readonly CommandType[] = ['transfer.create', 'hold.create', 'transfer.reverse', 'payment.create'];
const PATCHES_METADATA: readonly CommandType[] = ['transfer.update', 'hold.update'];

const invalid = (field: string, message: string): Refused => refused('invalid_request', message, field);

/**
 * Why the ledger refuses a command as it is, before deciding on it; null when it may be decided.
 * `payload` is the parsed payload; the envelope's own strings are checked by the caller.
 */
export function screenPayload(type: CommandType, accountId: string, payload: unknown): Refused | null {
  const shape = SHAPES[type];
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
  if (type === 'transfer.batch') return screenBatch(fields);
  return screenMetadata(type, fields) ?? screenWalletsAndHolds(type, fields);
}

/**
 * A command's metadata within the bounds of DESIGN.md section 5h (ledger/metadata.ts), as the API
 * checked it: an object of strings would store whatever it is, and every reader of the record
 * (its views, the list filters, the events' Avro map) takes one.
 */
function screenMetadata(type: CommandType, fields: Record<string, unknown>): Refused | null {
  const patch = PATCHES_METADATA.includes(type);
  if (!patch && (!CREATES_METADATA.includes(type) || fields.metadata === undefined)) return null;
  if (type === 'transfer.update' && fields.reversal_id !== null && !isCanonicalUuid(fields.reversal_id)) {
    return invalid('reversal_id', 'reversal_id must be null (the transfer itself) or a reversal id');
  }
  const problem = metadataProblem(fields.metadata, patch);
  return problem ? invalid(problem.field, problem.message) : null;
}

/**
 * A batch's items, each as a transfer.create payload would be screened, named by its index: one
 * malformed item refuses the batch (the API checks the same), never fails the round.
 */
function screenBatch(fields: Record<string, unknown>): Refused | null {
  if (typeof fields.atomic !== 'boolean') return invalid('atomic', 'atomic must be true or false');
  const { items } = fields;
  if (!Array.isArray(items) || items.length === 0 || items.length > BATCH_ITEMS_MAX) return invalid('transfers', `transfers must hold 1 to ${BATCH_ITEMS_MAX} transfers`);
  const ids = new Set<string>();
  for (const [index, item] of items.entries()) {
    const at = (field: string) => `transfers[${index}].${field}`;
    if (item === null || typeof item !== 'object' || Array.isArray(item)) return invalid(`transfers[${index}]`, `transfers[${index}] must be an object`);
    const refusal = screenPayload('transfer.create', '00000000-0000-0000-0000-000000000000', item);
    if (refusal) return invalid(at(refusal.field ?? 'payload'), `transfers[${index}]: ${refusal.message}`);
    const { transfer_id: id, type, recipient_email: email, recipient, note } = item as Record<string, any>;
    if (ids.has(id)) return invalid(at('transfer_id'), 'two items name the same transfer');
    ids.add(id);
    const internal = type === 'internal' && typeof email === 'string' && recipient === undefined;
    const external = type === 'external' && email === undefined && typeof recipient?.email === 'string'
      && typeof recipient?.bank?.account_number === 'string' && typeof recipient?.bank?.currency === 'string';
    if (!internal && !external) return invalid(at('recipient_email'), 'an item names recipient_email (internal) or recipient with bank details (external)');
    if (!isTextOrNull(note)) return invalid(at('note'), 'note must be text');
  }
  return null;
}

const isWalletSide = (value: unknown) => value === 'main' || isCanonicalUuid(value);
const isTextOrNull = (value: unknown) => value === null || value === undefined || typeof value === 'string';

/** The fields of wallet and hold commands, and the wallet a transfer is sent from, a round would otherwise store as they are (DESIGN.md section 5g). */
function screenWalletsAndHolds(type: CommandType, fields: Record<string, unknown>): Refused | null {
  if (type === 'transfer.create') {
    const walletId = fields.from_wallet_id;
    if (walletId !== undefined && walletId !== null && !isCanonicalUuid(walletId)) return invalid('from_wallet_id', 'from_wallet_id must be null (the main balance) or a wallet id');
  }
  if (type === 'wallet.transfer') {
    for (const field of ['from_wallet_id', 'to_wallet_id']) if (!isWalletSide(fields[field])) return invalid(field, `${field} must be "main" or a wallet id (a UUID in lower case)`);
    if (!isTextOrNull(fields.description)) return invalid('description', 'description must be text');
  }
  if (type === 'hold.create') {
    if (fields.wallet_id !== null && !isCanonicalUuid(fields.wallet_id)) return invalid('wallet_id', 'wallet_id must be null (the main balance) or a wallet id');
    if (typeof fields.expires_at !== 'string' || Number.isNaN(Date.parse(fields.expires_at))) return invalid('expires_at', 'expires_at must be an ISO 8601 instant');
    if (!isTextOrNull(fields.description)) return invalid('description', 'description must be text');
  }
  if (type === 'hold.capture') {
    if (typeof fields.final !== 'boolean') return invalid('final', 'final must be true or false');
    if (!isTextOrNull(fields.note)) return invalid('note', 'note must be text');
  }
  return null;
}
