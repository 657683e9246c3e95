// Reversals of transfers (DESIGN.md section 5h): POST /v1/transfers/{id}/reversals gives back part
// or all of a completed transfer, decided by the ledger (ledger/commands/transfer-reverse.ts), so
// the reversals of a transfer never add up to more than it: between two accounts of this service at
// once, through the partner (a return, pending until it answers) for a transfer it paid out, with
// the Sandbox-Scenario a test asks the partner to act out. GET lists them, or reads one. A
// reversal's metadata is kept in its transfer's record, so it changes as the transfer's does: a
// transfer.update command naming the reversal (PATCH).
import { metadataOf, metadataPatchSchema, metadataSchema, metadataViewSchema, type Metadata, type MetadataPatch } from '../../ledger/metadata';
import { amountSchema, formatAmount, parseAmount } from '../../ledger/money';
import type { TransferReverse } from '../../ledger/commands/transfer-reverse';
import type { TransferUpdate } from '../../ledger/commands/transfer-update';
import { REVERSAL_STATUSES, type TransferRecord, type TransferReversal } from '../../ledger/transfers';
import type { FromSchema } from 'json-schema-to-ts';
import { DomainError } from '../domain-error';
import { withBody, type RouteDef, type RouteRequest, type RouteResult } from '../http/route';
import { idParams } from '../http/validation';
import { derivedUuid, idempotentCommandId } from '../idempotency/derived-ids';
import { RETRY_AFTER_SECONDS } from '../idempotency/guard';
import { decisionAnswer } from '../ledger-client/answers';
import type { LedgerClient } from '../ledger-client/client';
import { ownTransfer, type TransferReads } from './reads';

const reverseBody = {
  type: 'object', additionalProperties: false,
  examples: [{ amount: '5.00', reason: 'sent to the wrong friend', metadata: { ticket: 'T-311' } }, {}],
  properties: {
    amount: { ...amountSchema, description: 'at most what is left to reverse, at the scale of the transfer\'s currency; all that is left when absent' },
    reason: { type: 'string', maxLength: 500, description: 'why, kept with the reversal' },
    metadata: metadataSchema,
  },
} as const;

const updateBody = {
  type: 'object', additionalProperties: false, required: ['metadata'],
  examples: [{ metadata: { ticket: 'T-312', refunded_by: null } }],
  properties: { metadata: metadataPatchSchema },
} as const;

const reversalSchema = {
  type: 'object', required: ['id', 'transfer_id', 'amount', 'currency', 'status', 'reason', 'metadata', 'created_at', 'payout', 'failure'],
  properties: {
    id: { type: 'string', format: 'uuid' }, transfer_id: { type: 'string', format: 'uuid' },
    amount: { type: 'string', description: 'given back to the sender, in the transfer\'s currency' }, currency: { type: 'string' },
    status: {
      type: 'string', enum: [...REVERSAL_STATUSES],
      description: 'a reversal between two accounts of this service is completed in the ledger entry that makes it; a transfer paid through a partner is returned by it: pending (the recipient\'s part held) until the partner answers, then completed (the sender credited) or failed (the part back with the recipient)',
    },
    reason: { type: ['string', 'null'] }, metadata: metadataViewSchema, created_at: { type: 'string', format: 'date-time' },
    payout: {
      type: ['object', 'null'], required: ['amount', 'currency'], description: 'a return through the partner: what the recipient gives back, in the transfer\'s payout currency, at the transfer\'s own rate; null between two accounts of this service',
      properties: { amount: { type: 'string' }, currency: { type: 'string' } },
    },
    failure: { type: ['object', 'null'], required: ['code', 'message'], description: 'why a return failed', properties: { code: { type: 'string' }, message: { type: ['string', 'null'] } } },
  },
};
const reversalParams = { type: 'object', properties: { id: { type: 'string', format: 'uuid' }, reversal_id: { type: 'string', format: 'uuid' } } };

const provisionalSchema = { type: 'object', required: ['id', 'status'], properties: { id: { type: 'string', format: 'uuid' }, status: { type: 'string', const: 'pending' } } };

const reversalView = (transfer: Pick<TransferRecord, 'id' | 'currency' | 'payout_currency'>, reversal: TransferReversal) => ({
  id: reversal.id, transfer_id: transfer.id, amount: formatAmount(reversal.amount, transfer.currency), currency: transfer.currency,
  status: reversal.status, reason: reversal.reason, metadata: metadataOf(reversal), created_at: reversal.created_at,
  payout: reversal.payout_amount === undefined ? null : { amount: formatAmount(reversal.payout_amount, transfer.payout_currency), currency: transfer.payout_currency },
  failure: reversal.status === 'failed' ? { code: reversal.failure_code ?? 'partner_error', message: reversal.failure_message ?? null } : null,
});

/** The reversal a route names (`:reversal_id`) among its transfer's. @throws DomainError resource_not_found */
function namedReversal(transfer: Pick<TransferRecord, 'reversals'>, request: RouteRequest): TransferReversal {
  const reversal = (transfer.reversals ?? []).find((r) => r.id === request.params.reversal_id);
  if (!reversal) throw new DomainError('resource_not_found', 'no such reversal of the transfer', 'reversal_id');
  return reversal;
}

const lateDecision = (reversalId: string): RouteResult => ({ status: 202, final: false, headers: { 'Retry-After': RETRY_AFTER_SECONDS }, body: { id: reversalId, status: 'pending' } });

export function reversalRoutes(reads: TransferReads, ledger: LedgerClient, replyTimeoutMs: number): RouteDef[] {
  const own = (request: RouteRequest) => ownTransfer(reads, request);
  const commandOf = async (request: RouteRequest<FromSchema<typeof reverseBody>>) => {
    const transfer = await own(request);
    const commandId = idempotentCommandId(transfer.account_id, request.idempotencyKey!);
    const command: TransferReverse = {
      transfer_id: transfer.id, reversal_id: derivedUuid('transfer-reversal', commandId),
      amount: request.body.amount === undefined ? null : parseAmount(request.body.amount, transfer.currency).toFixed(), reason: request.body.reason ?? null,
      ...(request.body.metadata === undefined ? {} : { metadata: request.body.metadata as Metadata }),
      ...(request.sandboxScenario ? { scenario: request.sandboxScenario } : {}),
    };
    return { accountId: transfer.account_id, commandId, command };
  };
  const updateOf = async (request: RouteRequest<FromSchema<typeof updateBody>>) => {
    const transfer = await own(request);
    const reversal = namedReversal(transfer, request);
    const command: TransferUpdate = { transfer_id: transfer.id, reversal_id: reversal.id, metadata: request.body.metadata as MetadataPatch };
    return { accountId: transfer.account_id, commandId: idempotentCommandId(transfer.account_id, request.idempotencyKey!), command };
  };
  return [
    withBody(reverseBody, {
      method: 'POST', path: '/v1/transfers/{id}/reversals', operationId: 'reverseTransfer', tag: 'transfers',
      summary: 'Reverse a completed transfer, in full or in part: between two accounts of this service the recipient\'s available back to the sender\'s at once; paid through a partner, a return the partner makes (pending until it answers), a conversion at the transfer\'s own rate',
      auth: { kind: 'key', scope: 'transfers:write', moneyMoving: true }, idempotent: 'ledger', sandboxScenario: true, params: idParams,
      response: { status: 201, description: 'the reversal: completed, or pending while the partner returns it', schema: reversalSchema },
      errors: ['transfer_not_found', 'cross_account_access_denied', 'transfer_not_reversible', 'reversal_exceeded', 'insufficient_funds'],
      errorNotes: {
        transfer_not_reversible: 'the transfer is not completed: nothing changes',
        reversal_exceeded: 'the amount is more than is left to reverse, its pending reversals counted: nothing changes',
        insufficient_funds: 'the recipient no longer has the amount (its part in the payout currency): nothing changes',
      },
      provisional: async (request) => lateDecision((await commandOf(request)).command.reversal_id), provisionalSchema,
      handler: async (request) => {
        const { accountId, commandId, command } = await commandOf(request);
        const decision = await ledger.execute('transfer.reverse', commandId, accountId, command, replyTimeoutMs, { key: request.idempotencyKey!, fingerprint: request.fingerprint! });
        if (!decision) return lateDecision(command.reversal_id);
        return decisionAnswer(decision, 'transfer', ({ transfer }) => {
          const reversal = (transfer.reversals ?? []).find((r) => r.id === command.reversal_id);
          if (!reversal) throw new Error(`the ledger's answer has no reversal ${command.reversal_id}`);
          return { status: 201, body: reversalView(transfer, reversal) };
        });
      },
    }),
    {
      method: 'GET', path: '/v1/transfers/{id}/reversals', operationId: 'listTransferReversals', tag: 'transfers',
      summary: 'The reversals of a transfer, oldest first', auth: { kind: 'key', scope: 'transfers:read' }, params: idParams,
      response: { status: 200, description: 'its reversals', schema: { type: 'object', required: ['data'], properties: { data: { type: 'array', items: reversalSchema } } } },
      errors: ['transfer_not_found', 'cross_account_access_denied'],
      handler: async (request) => {
        const transfer = await own(request);
        return { status: 200, body: { data: (transfer.reversals ?? []).map((r) => reversalView(transfer, r)) } };
      },
    },
    {
      method: 'GET', path: '/v1/transfers/{id}/reversals/{reversal_id}', operationId: 'getTransferReversal', tag: 'transfers',
      summary: 'One reversal of a transfer', auth: { kind: 'key', scope: 'transfers:read' }, params: reversalParams,
      response: { status: 200, description: 'the reversal', schema: reversalSchema },
      errors: ['transfer_not_found', 'cross_account_access_denied'],
      handler: async (request) => {
        const transfer = await own(request);
        return { status: 200, body: reversalView(transfer, namedReversal(transfer, request)) };
      },
    },
    withBody(updateBody, {
      method: 'PATCH', path: '/v1/transfers/{id}/reversals/{reversal_id}', operationId: 'updateTransferReversal', tag: 'transfers',
      summary: 'Change a reversal\'s metadata: a key set to a string is set, a key set to null removed, the others kept',
      auth: { kind: 'key', scope: 'transfers:write' }, idempotent: 'ledger', params: reversalParams,
      response: { status: 200, description: 'the reversal, its metadata changed', schema: reversalSchema },
      errors: ['transfer_not_found', 'cross_account_access_denied'],
      errorNotes: { invalid_request: 'among others: details names the metadata key at fault (metadata.ticket), also the first key past 50 after the change; nothing changes' },
      provisional: async (request) => lateDecision((await updateOf(request)).command.reversal_id!), provisionalSchema,
      handler: async (request) => {
        const { accountId, commandId, command } = await updateOf(request);
        const decision = await ledger.execute('transfer.update', commandId, accountId, command, replyTimeoutMs, { key: request.idempotencyKey!, fingerprint: request.fingerprint! });
        if (!decision) return lateDecision(command.reversal_id!);
        return decisionAnswer(decision, 'transfer', ({ transfer }) => ({ status: 200, body: reversalView(transfer, namedReversal(transfer, request)) }));
      },
    }),
  ];
}
