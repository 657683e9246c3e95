// Turns a ledger round's events, entries and partner instructions into outbox rows (ledger/round.ts
// OutboxRows): their topics and envelopes; encode.ts makes Kafka records of them.
import { randomUUID } from 'node:crypto';
import type { EventDraft } from '../../ledger/decision';
import { partnerEnvelope, type DomainEventEnvelope, type PartnerInstruction } from '../../ledger/messages';
import type { EntryWrite, OutboxWrite } from '../../ledger/ports';
import { domainEventHeaders, TOPICS } from '../kafka/topics';

export function eventRow(event: EventDraft, environment: string, now: Date): OutboxWrite {
  const envelope: DomainEventEnvelope = {
    id: randomUUID(), type: event.type, created_at: now.toISOString(), environment,
    resource_type: event.resourceType, resource_id: event.resourceId, account_id: event.accountId,
    account_seq: 0, // numbered when the round is written (ledger/store/round-write.ts)
    data: {
      id: event.resourceId, status: event.status, amount: event.amount, currency: event.currency,
      attributes: event.attributes ? JSON.stringify(event.attributes) : null, metadata: event.metadata ?? null,
    },
  };
  return { id: envelope.id, topic: TOPICS.domainEvents, key: event.resourceId, accountId: event.accountId, payload: envelope, headers: domainEventHeaders(event.accountId) };
}

export function entryRow(entry: EntryWrite, now: Date): OutboxWrite {
  return {
    id: entry.id, topic: TOPICS.ledgerEntries, key: entry.id, accountId: null,
    payload: {
      id: entry.id, kind: entry.kind, command_id: entry.commandId, transfer_id: entry.transferId, created_at: now.toISOString(),
      postings: entry.postings.map((p) => ({
        ledger_account_id: p.ledgerAccountId, ledger_account_code: p.ref.code, account_id: p.ref.accountId,
        currency: p.ref.currency, amount: p.amount.toFixed(),
      })),
    },
  };
}

export function partnerCommandRow(partner: string, accountId: string, instruction: PartnerInstruction, now: Date): OutboxWrite {
  const envelope = partnerEnvelope(partner, accountId, instruction, now);
  return { id: randomUUID(), topic: TOPICS.partnerCommands, key: envelope.resource_id, accountId: null, payload: envelope };
}
