// Transfer batches (DESIGN.md section 5g): up to 1,000 transfers of POST /v1/transfers's shape in
// one request and one ledger command, decided in the ledger's rounds (ledger/commands/transfer-batch.ts):
// `atomic` all or none in one transaction, else each alone. The answer lists every item's outcome
// in the order sent; GET reads the batch again. Ids derive from the account and the
// Idempotency-Key, so a retry names the same batch and the same transfers.
import { BATCH_ITEMS_MAX, type TransferBatch } from '../../ledger/commands/transfer-batch';
import type { TransferCreate } from '../../ledger/commands/transfer-create';
import { formatAmount } from '../../ledger/money';
import type { TransferBatchOutcome } from '../../ledger/outcome';
import type { Db } from '../db';
import { DomainError, isDomainError } from '../domain-error';
import { actingAccountIdForWrite, assertOwnResource } from '../http/acting-account';
import { withBody, type BodyOf, type RouteDef, type RouteRequest, type RouteResult } from '../http/route';
import { idParams } from '../http/validation';
import { derivedUuid, idempotentCommandId } from '../idempotency/derived-ids';
import { RETRY_AFTER_SECONDS } from '../idempotency/guard';
import { decisionAnswer } from '../ledger-client/answers';
import { type LedgerClient } from '../ledger-client/client';
import { createBodySchema, transferCommand } from '../transfers/commands';
import { batchView, type TransferBatchReads } from './reads';

const { account_id: _masterOnly, ...itemProperties } = createBodySchema.properties;
/** One transfer of a batch: POST /v1/transfers's body, the account being the batch's. */
const itemSchema = { ...createBodySchema, examples: undefined, properties: itemProperties } as const;

const batchBody = {
  type: 'object', additionalProperties: false, required: ['transfers', 'atomic'],
  examples: [{ atomic: true, transfers: [{ recipient_email: 'friend@example.com', amount: '10.00', currency: 'USD', note: 'dinner' }, { recipient_email: 'other@example.com', amount: '5.00', currency: 'USD' }] }],
  properties: {
    transfers: { type: 'array', minItems: 1, maxItems: BATCH_ITEMS_MAX, items: itemSchema, description: `1 to ${BATCH_ITEMS_MAX} bodies of POST /v1/transfers (without account_id), decided in this order` },
    atomic: { type: 'boolean', description: 'true: every transfer is created or none, in one ledger transaction; false: each is decided alone' },
    account_id: { type: 'string', format: 'uuid', description: 'master key only' },
  },
} as const;
type BatchBody = BodyOf<typeof batchBody>;

const errorSchema = {
  type: 'object', required: ['success', 'error', 'message', 'details'],
  properties: { success: { type: 'boolean', const: false }, error: { type: 'string' }, message: { type: 'string' }, details: { type: ['string', 'null'] } },
};
const ITEM_STATUSES = ['created', 'refused', 'not_created'];
const itemOutcomeSchema = {
  type: 'object', required: ['index', 'status', 'transfer_id', 'error'],
  properties: {
    index: { type: 'integer', minimum: 0 },
    status: {
      type: 'string', enum: ITEM_STATUSES,
      description: 'created: its transfer exists (GET /v1/transfers/{transfer_id}); refused: why in error; not_created: an atomic batch in which another item was refused',
    },
    transfer_id: { type: ['string', 'null'], format: 'uuid', description: 'the transfer created; null unless created' },
    error: { ...errorSchema, type: ['object', 'null'], description: 'the error body of a refused item, details naming its field (transfers[3].amount); null otherwise' },
  },
};
const batchSchema = {
  type: 'object', required: ['id', 'atomic', 'status', 'items', 'created_at'],
  properties: {
    id: { type: 'string', format: 'uuid' }, atomic: { type: 'boolean' },
    status: { type: 'string', enum: ['completed', 'failed', 'partial'], description: 'completed: every item created; failed: none; partial: some (atomic: false only)' },
    items: { type: 'array', items: itemOutcomeSchema, description: 'every item, in the order sent' },
    created_at: { type: 'string', format: 'date-time' },
  },
};
const provisionalBatchSchema = {
  type: 'object', required: ['id', 'atomic', 'status', 'items'],
  properties: {
    id: { type: 'string', format: 'uuid' }, atomic: { type: 'boolean' }, status: { type: 'string', const: 'pending' },
    items: { type: 'array', items: { type: 'object', required: ['index', 'status', 'amount', 'currency'], properties: { index: { type: 'integer' }, status: { type: 'string', const: 'pending' }, amount: { type: 'string' }, currency: { type: 'string' } } } },
  },
};

/** The answer while the ledger has not decided: accepted, not decided; repeat with the same key. */
function lateDecision(batchId: string, command: TransferBatch): RouteResult {
  return {
    status: 202, final: false, headers: { 'Retry-After': RETRY_AFTER_SECONDS },
    body: { id: batchId, atomic: command.atomic, status: 'pending', items: command.items.map((t, index) => ({ index, status: 'pending', amount: formatAmount(t.amount, t.currency), currency: t.currency })) },
  };
}

const batchAnswer = (outcome: TransferBatchOutcome): RouteResult => ({ status: 201, body: batchView(outcome.batch) });

/** Each item as transfer.create's command; what is wrong with one is named by its index (transfers[3].amount). */
function itemCommands(body: BatchBody, commandId: string): TransferCreate[] {
  return body.transfers.map((item, index) => {
    try {
      return transferCommand(item, derivedUuid('transfer-batch-item', commandId, String(index)));
    } catch (error) {
      if (!isDomainError(error)) throw error;
      throw new DomainError(error.code, `transfers[${index}]: ${error.message}`, `transfers[${index}]${error.details ? `.${error.details}` : ''}`);
    }
  });
}

/**
 * The most a batch's command may weigh as JSON: the batch goes to the ledger as one Kafka message,
 * and the broker takes at most 1 MiB (message.max.bytes); its Avro form is smaller than its JSON.
 * A batch beyond it (1,000 items with 500-character notes is about 1.7 MB; metadata weighs as much as it holds) is refused before it
 * is sent, so it is never answered 503 for ever, and never fails the commands produced with it.
 */
export const BATCH_COMMAND_BYTES_MAX = 768 * 1024;

function assertOneMessage(command: TransferBatch): void {
  const bytes = Buffer.byteLength(JSON.stringify(command));
  if (bytes > BATCH_COMMAND_BYTES_MAX) {
    throw new DomainError('invalid_request', `the batch is too large for one message to the ledger (${bytes} bytes, at most ${BATCH_COMMAND_BYTES_MAX}): send it as smaller batches, or with shorter notes or less metadata`, 'transfers');
  }
}

export interface TransferBatchRouteDeps { db: Db; reads: TransferBatchReads; ledger: LedgerClient; replyTimeoutMs: number }

export function transferBatchRoutes({ db, reads, ledger, replyTimeoutMs }: TransferBatchRouteDeps): RouteDef[] {
  // The batch is the command: its id is the command's, which the Idempotency-Key names.
  const commandOf = async (request: RouteRequest<BatchBody>) => {
    const accountId = await actingAccountIdForWrite(request, db);
    const commandId = idempotentCommandId(accountId, request.idempotencyKey!);
    const command: TransferBatch = { atomic: request.body.atomic, items: itemCommands(request.body, commandId) };
    assertOneMessage(command);
    return { accountId, commandId, command };
  };
  return [
    withBody(batchBody, {
      method: 'POST', path: '/v1/transfer-batches', operationId: 'createTransferBatch', tag: 'transfers',
      summary: `Up to ${BATCH_ITEMS_MAX} transfers in one request: all or none (atomic), or each alone; every item's outcome in the order sent`,
      auth: { kind: 'key', scope: 'transfers:write', moneyMoving: true }, idempotent: 'ledger', bodyLimitBytes: 2_000_000,
      response: { status: 201, description: 'the batch, decided (also when no item was created: status failed)', schema: batchSchema },
      errors: ['unsupported_pair', 'invalid_currency'],
      errorNotes: { invalid_request: `among others: a batch too large for one message to the ledger (its command over ${BATCH_COMMAND_BYTES_MAX} bytes as JSON), details "transfers"` },
      provisional: async (request) => {
        const { commandId, command } = await commandOf(request);
        return lateDecision(commandId, command);
      },
      provisionalSchema: provisionalBatchSchema,
      handler: async (request) => {
        const { accountId, commandId, command } = await commandOf(request);
        const decision = await ledger.execute('transfer.batch', commandId, accountId, command, replyTimeoutMs, { key: request.idempotencyKey!, fingerprint: request.fingerprint! });
        return decision ? decisionAnswer(decision, 'transfer_batch', batchAnswer) : lateDecision(commandId, command);
      },
    }),
    {
      method: 'GET', path: '/v1/transfer-batches/{id}', operationId: 'getTransferBatch', tag: 'transfers',
      summary: 'One transfer batch, every item\'s outcome in the order sent', auth: { kind: 'key', scope: 'transfers:read' },
      params: idParams,
      response: { status: 200, description: 'the batch', schema: batchSchema },
      errors: ['resource_not_found', 'cross_account_access_denied'],
      handler: async (request) => {
        const batch = await reads.byId(request.params.id);
        if (!batch) throw new DomainError('resource_not_found', 'no such transfer batch', 'id');
        assertOwnResource(request, batch.account_id, batch.id);
        return { status: 200, body: batchView(batch) };
      },
    },
  ];
}
