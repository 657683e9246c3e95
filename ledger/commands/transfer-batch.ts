// transfer.batch: up to 1,000 transfers in one command, atomic or each alone (ledger/decide-batches.ts).
import { decideTransferBatch } from '../decide-batches';
import type { TransferBatch } from '../messages';
import { asScreened, type LedgerCommand, type Needs } from './command';
import { recipientOf } from './facts';
import { transferAccounts, transferNeeds } from './transfer-create';

export const transferBatch: LedgerCommand<TransferBatch> = {
  parse: asScreened,
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
