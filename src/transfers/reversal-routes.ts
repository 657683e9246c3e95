// Reversals of transfers (DESIGN.md section 5h): POST /v1/transfers/{id}/reversals gives back part
// or all of a completed transfer, decided by the ledger (ledger/commands/transfer-reverse.ts), so
// the reversals of a transfer never add up to more than it: between two accounts of this service at
// once, through the partner (a return, pending until it answers) for a transfer it paid out, with
// the Sandbox-Scenario a test asks the partner to act out. GET lists them.
import { amountSchema, formatAmount, parseAmount } from '../../ledger/money';
import type { TransferReverse } from '../../ledger/messages';
import { REVERSAL_STATUSES, type TransferRecord, type TransferReversal } from '../../ledger/transfers';
import type { FromSchema } from 'json-schema-to-ts';
import { withBody, type RouteDef, type RouteRequest, type RouteResult } from '../http/route';
import { idParams } from '../http/validation';
import { derivedUuid, idempotentCommandId } from '../idempotency/derived-ids';
import { RETRY_AFTER_SECONDS } from '../idempotency/guard';
import { decisionAnswer } from '../ledger-client/answers';
import type { LedgerClient } from '../ledger-client/client';
import { ownTransfer, type TransferReads } from './reads';

const reverseBody = {
  type: 'object', additionalProperties: false,
  examples: [{ amount: '5.00', reason: 'sent to the wrong friend' }, {}],
  properties: {
    amount: { ...amountSchema, description: 'at most what is left to reverse, at the scale of the transfer\'s currency; all that is left when absent' },
    reason: { type: 'string', maxLength: 500, description: 'why, kept with the reversal' },
  },
} as const;

const reversalSchema = {
  type: 'object', required: ['id', 'transfer_id', 'amount', 'currency', 'status', 'reason', 'created_at', 'payout', 'failure'],
  properties: {
    id: { type: 'string', format: 'uuid' }, transfer_id: { type: 'string', format: 'uuid' },
    amount: { type: 'string', description: 'given back to the sender, in the transfer\'s currency' }, currency: { type: 'string' },
    status: {
      type: 'string', enum: [...REVERSAL_STATUSES],
      description: 'a reversal between two accounts of this service is completed in the ledger entry that makes it; a transfer paid through a partner is returned by it: pending (the recipient\'s part held) until the partner answers, then completed (the sender credited) or failed (the part back with the recipient)',
    },
    reason: { type: ['string', 'null'] }, created_at: { type: 'string', format: 'date-time' },
    payout: {
      type: ['object', 'null'], required: ['amount', 'currency'], description: 'a return through the partner: what the recipient gives back, in the transfer\'s payout currency, at the transfer\'s own rate; null between two accounts of this service',
      properties: { amount: { type: 'string' }, currency: { type: 'string' } },
    },
    failure: { type: ['object', 'null'], required: ['code', 'message'], description: 'why a return failed', properties: { code: { type: 'string' }, message: { type: ['string', 'null'] } } },
  },
};

const provisionalSchema = { type: 'object', required: ['id', 'status'], properties: { id: { type: 'string', format: 'uuid' }, status: { type: 'string', const: 'pending' } } };

const reversalView = (transfer: Pick<TransferRecord, 'id' | 'currency' | 'payout_currency'>, reversal: TransferReversal) => ({
  id: reversal.id, transfer_id: transfer.id, amount: formatAmount(reversal.amount, transfer.currency), currency: transfer.currency,
  status: reversal.status, reason: reversal.reason, created_at: reversal.created_at,
  payout: reversal.payout_amount === undefined ? null : { amount: formatAmount(reversal.payout_amount, transfer.payout_currency), currency: transfer.payout_currency },
  failure: reversal.status === 'failed' ? { code: reversal.failure_code ?? 'partner_error', message: reversal.failure_message ?? null } : null,
});

const lateDecision = (reversalId: string): RouteResult => ({ status: 202, final: false, headers: { 'Retry-After': RETRY_AFTER_SECONDS }, body: { id: reversalId, status: 'pending' } });

export function reversalRoutes(reads: TransferReads, ledger: LedgerClient, replyTimeoutMs: number): RouteDef[] {
  const own = (request: RouteRequest) => ownTransfer(reads, request);
  const commandOf = async (request: RouteRequest<FromSchema<typeof reverseBody>>) => {
    const transfer = await own(request);
    const commandId = idempotentCommandId(transfer.account_id, request.idempotencyKey!);
    const command: TransferReverse = {
      transfer_id: transfer.id, reversal_id: derivedUuid('transfer-reversal', commandId),
      amount: request.body.amount === undefined ? null : parseAmount(request.body.amount, transfer.currency).toFixed(), reason: request.body.reason ?? null,
      ...(request.sandboxScenario ? { scenario: request.sandboxScenario } : {}),
    };
    return { accountId: transfer.account_id, commandId, command };
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
  ];
}
