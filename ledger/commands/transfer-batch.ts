// transfer.batch: up to 1,000 transfers in one command, atomic or each alone (ledger/decide-batches.ts).
import { decideTransferBatch } from '../decide-batches';
import { BATCH_ITEMS_MAX, type TransferBatch } from '../messages';
import type { Refused } from '../outcome';
import { invalid, isTextOrNull, screenPayload } from '../screen';
import type { LedgerCommand, Needs } from './command';
import { recipientOf } from './facts';
import { transferAccounts, transferCreate, transferNeeds } from './transfer-create';

/** An item's account is the batch's, screened with the batch's own: only the item's fields are screened here. */
const ITEM_ACCOUNT = '00000000-0000-0000-0000-000000000000';

/**
 * A batch's items, each screened as a transfer.create payload would be, named by its index: one
 * malformed item refuses the batch (the API checks the same), never fails the round.
 */
function screenItems(fields: Record<string, unknown>): Refused | null {
  if (typeof fields.atomic !== 'boolean') return invalid('atomic', 'atomic must be true or false');
  const { items } = fields;
  if (!Array.isArray(items) || items.length === 0 || items.length > BATCH_ITEMS_MAX) return invalid('transfers', `transfers must hold 1 to ${BATCH_ITEMS_MAX} transfers`);
  const ids = new Set<string>();
  for (const [index, item] of items.entries()) {
    const at = (field: string) => `transfers[${index}].${field}`;
    if (item === null || typeof item !== 'object' || Array.isArray(item)) return invalid(`transfers[${index}]`, `transfers[${index}] must be an object`);
    const parsed = transferCreate.parse(item);
    const refusal = screenPayload(transferCreate.shape, ITEM_ACCOUNT, item) ?? ('refusal' in parsed ? parsed.refusal : null);
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

export const transferBatch: LedgerCommand<TransferBatch> = {
  // Its items are screened one by one (screenItems).
  shape: { ids: [], amounts: [], currencies: [], accountIsUuid: true },
  parse(payload) {
    const refusal = screenItems(payload as Record<string, unknown>);
    return refusal ? { refusal } : { payload: payload as TransferBatch };
  },
  needs: (payload) => {
    const items = payload.items.map(transferNeeds);
    return { sender: true, emails: items.flatMap((n) => n.emails ?? []), banks: items.flatMap((n) => n.banks ?? []), wallets: items.flatMap((n) => n.wallets ?? []) } satisfies Needs;
  },
  accounts: (payload, accountId, facts) => payload.items.flatMap((item) => transferAccounts(accountId, item, facts)),
  decide({ commandId, accountId, payload, facts, locked, book, now }) {
    const sender = facts.accountsById.get(accountId) ?? null;
    return decideTransferBatch(commandId, accountId, payload, (item) => ({ sender, recipient: recipientOf(item, facts), wallets: locked.wallets }), book, now);
  },
};
