// transfer.batch: up to 1,000 transfers in one command (DESIGN.md section 5g), decided in order in
// one round against the round's balances, each exactly as transfer.create decides one
// (transfer-create.ts), so a batch refuses what a single transfer would refuse and moves money as
// it would: items sent from one wallet (from_wallet_id) count together against its balance as
// others against the main one. Atomic: the balances are put back as they were when any item is
// refused, and nothing of the batch is written (one transaction, every transfer or none). Not
// atomic: each item stands alone.
import type { BalanceBook } from '../balances';
import { emptyDecision, type Decision } from '../decision';
import type { BatchItem, Refused, TransferBatchOutcome } from '../outcome';
import { invalid, isTextOrNull, screenPayload } from '../screen';
import type { LedgerCommand, Needs } from './command';
import { decideTransferCreate, recipientOf, transferAccounts, transferCreate, transferNeeds, type TransferCreate, type TransferFacts } from './transfer-create';

/** Most transfers one batch carries (DESIGN.md section 5g). */
export const BATCH_ITEMS_MAX = 1000;

/**
 * Many transfers in one command (DESIGN.md section 5g), each of the shape of transfer.create,
 * decided in order in one round: `atomic` all or none, else each alone. The batch's id is its
 * command's id, so its record is the command's (processed_commands).
 */
export interface TransferBatch {
  atomic: boolean;
  items: TransferCreate[];
}

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

/** The command id an item's transfer is recorded under (transfers.command_id is unique). */
const itemCommandId = (commandId: string, index: number): string => `${commandId}:${index}`;

export function decideTransferBatch(commandId: string, accountId: string, command: TransferBatch, factsOf: (item: TransferCreate) => TransferFacts,
  book: BalanceBook, now: Date): Decision {
  const restore = command.atomic ? book.checkpoint() : null;
  const parts: Decision[] = [];
  const items: BatchItem[] = command.items.map((item, index) => {
    const part = decideTransferCreate(itemCommandId(commandId, index), item, factsOf(item), book, now);
    if (part.outcome.kind === 'refused') {
      const { code, message, field } = part.outcome;
      return { index, status: 'refused', transfer_id: item.transfer_id, error: { code, message, field: field === null ? null : `transfers[${index}].${field}` } };
    }
    parts.push(part);
    return { index, status: 'created', transfer_id: item.transfer_id, error: null };
  });
  const refusedCount = items.filter((i) => i.status === 'refused').length;
  if (restore && refusedCount > 0) {
    // All or none: the items decided so far are undone, their balances as before the batch.
    restore();
    parts.length = 0;
    for (const item of items) if (item.status === 'created') item.status = 'not_created';
  }
  const created = items.filter((i) => i.status === 'created').length;
  const status = created === items.length ? 'completed' : created === 0 ? 'failed' : 'partial';
  const outcome: TransferBatchOutcome = {
    kind: 'transfer_batch', batch: { id: commandId, account_id: accountId, atomic: command.atomic, status, items, created_at: now.toISOString() },
  };
  const decision = emptyDecision(outcome);
  decision.parts = parts;
  return decision;
}
