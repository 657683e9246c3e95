// Transfers (SPEC.md section 4): the ingress validates, sends a command to the ledger and
// returns its decision. It never reads a balance to decide.
import type { TransferCreate } from '../../ledger/commands/transfer-create';
import type { TransferUpdate } from '../../ledger/commands/transfer-update';
import { metadataPatchSchema, metadataViewSchema, type MetadataPatch } from '../../ledger/metadata';
import { formatAmount } from '../../ledger/money';
import type { Environment } from '../config';
import type { Db } from '../db';
import { DomainError } from '../domain-error';
import { actingAccountId, actingAccountIdForWrite } from '../http/acting-account';
import { listFilterOf, listFilterSchemas, listQuerySchema, listResponseSchema } from '../http/pagination';
import { withBody, type BodyOf, type RouteDef, type RouteRequest, type RouteResult } from '../http/route';
import { idParams } from '../http/validation';
import { derivedUuid, idempotentCommandId } from '../idempotency/derived-ids';
import { RETRY_AFTER_SECONDS } from '../idempotency/guard';
import { decisionAnswer, transferAnswer, transferView } from '../ledger-client/answers';
import { type LedgerClient } from '../ledger-client/client';
import { createBodySchema, CreateTransferBody, emailSchema, transferCommand } from './commands';
import { ownTransfer, type TransferReads } from './reads';

const TRANSFER_STATUSES = ['pending', 'quoting', 'executing', 'completed', 'failed', 'rolled_back'];
const nullableString = { type: ['string', 'null'] };

const provisionalRequired = ['transfer_id', 'type', 'status', 'amount', 'currency', 'estimated_arrival', 'partner_payment_id'];
const transferSchema = {
  type: 'object',
  required: [...provisionalRequired, 'payout', 'fx', 'recipient', 'note', 'metadata', 'failure', 'late_completion', 'reversed_amount', 'created_at', 'updated_at', 'completed_at'],
  properties: {
    transfer_id: { type: 'string', format: 'uuid' },
    type: { type: 'string', enum: ['internal', 'external'] },
    status: { type: 'string', enum: TRANSFER_STATUSES },
    amount: { type: 'string', description: 'what the sender pays, in currency' }, currency: { type: 'string' },
    payout: {
      type: 'object', required: ['amount', 'currency'], description: 'what the recipient receives: the amount itself, or its conversion at fx.rate',
      properties: { amount: { type: 'string' }, currency: { type: 'string' } },
    },
    fx: {
      type: ['object', 'null'], required: ['rate', 'mid_rate', 'spread'],
      description: 'the price fixed while the transfer was quoting, when the recipient\'s bank currency differs from currency; null otherwise',
      properties: {
        rate: { type: 'string', description: 'payout currency units per unit of currency, after the spread' },
        mid_rate: { type: 'string' }, spread: { type: 'string' },
      },
    },
    recipient: {
      type: 'object', description: 'the recipient: email alone for an internal transfer; name and bank details for an external one',
      required: ['email'],
      properties: {
        email: { type: 'string' }, name: { type: 'string' },
        bank: { type: 'object', required: ['country', 'bank_name', 'account_number', 'currency'], properties: { country: { type: 'string' }, bank_name: { type: 'string' }, account_number: { type: 'string' }, routing_number: { type: 'string' }, currency: { type: 'string' } } },
      },
    },
    note: nullableString,
    metadata: metadataViewSchema,
    estimated_arrival: { type: 'string' }, partner_payment_id: nullableString,
    failure: {
      type: ['object', 'null'], required: ['code', 'message'], properties: { code: { type: 'string' }, message: nullableString },
      description: 'why a failed or rolled_back transfer ended so: partner_declined, partner_rejected, partner_reversed, claim_expired, invalid_partner; '
        + 'partner_unavailable, partner_error (only once the partner confirmed it holds no payment under the transfer\'s id); '
        + 'execution_deadline (executing past its deadline, and the partner confirmed it holds no payment)',
    },
    late_completion: {
      type: ['object', 'null'], required: ['failure_code', 'failure_message', 'failed_at', 'receivable'],
      description: 'set when the partner paid the transfer after it had failed: the transfer was completed through the ledger (the amount held again and settled); '
        + 'the failure it overturned, and what the sender\'s available balance did not cover (owed, "0.00" when covered)',
      properties: { failure_code: nullableString, failure_message: nullableString, failed_at: { type: 'string', format: 'date-time' }, receivable: { type: 'string' } },
    },
    reversed_amount: { type: 'string', description: 'what its reversals give back to the sender (POST /v1/transfers/{id}/reversals), returns the partner has not answered yet included, failed ones not; "0.00" when none' },
    created_at: { type: 'string', format: 'date-time' }, updated_at: { type: 'string', format: 'date-time' }, completed_at: { type: ['string', 'null'], format: 'date-time' },
  },
};

/** The 202 a late decision answers: what the request itself says, before the ledger has decided. */
const provisionalTransferSchema = { ...transferSchema, required: provisionalRequired };

const transferWithHistorySchema = {
  ...transferSchema,
  required: [...transferSchema.required, 'status_history'],
  properties: {
    ...transferSchema.properties,
    status_history: {
      type: 'array', description: 'every status the transfer took, oldest first',
      items: { type: 'object', required: ['from', 'to', 'at'], properties: { from: { type: ['string', 'null'], enum: [...TRANSFER_STATUSES, null] }, to: { type: 'string', enum: TRANSFER_STATUSES }, at: { type: 'string', format: 'date-time' } } },
    },
  },
};

/** The answer while the ledger has not decided yet: accepted, not created; retry to learn more. */
function lateDecision(command: TransferCreate): RouteResult {
  return {
    status: 202,
    final: false,
    headers: { 'Retry-After': RETRY_AFTER_SECONDS },
    body: {
      transfer_id: command.transfer_id, type: command.type, status: 'pending', amount: formatAmount(command.amount, command.currency),
      currency: command.currency, estimated_arrival: 'pending the ledger decision', partner_payment_id: null, metadata: command.metadata ?? {},
    },
  };
}

const updateBody = {
  type: 'object', additionalProperties: false, required: ['metadata'],
  examples: [{ metadata: { order_id: 'A-17', gift: null } }],
  properties: { metadata: metadataPatchSchema },
} as const;

/** The 202 of a change the ledger has not decided yet: repeat it with the same Idempotency-Key. */
const updatePending = (transferId: string): RouteResult => ({ status: 202, final: false, headers: { 'Retry-After': RETRY_AFTER_SECONDS }, body: { transfer_id: transferId, status: 'pending' } });
const updatePendingSchema = {
  type: 'object', required: ['transfer_id', 'status'],
  properties: { transfer_id: { type: 'string', format: 'uuid' }, status: { type: 'string', const: 'pending', description: 'the change, not yet decided (a transfer itself is never pending once decided)' } },
};

export function transferRoutes(db: Db, reads: TransferReads, ledger: LedgerClient, environment: Environment, replyTimeoutMs: number): RouteDef[] {
  // Ids derive from the account and the Idempotency-Key: a retry names the same command and transfer.
  const commandOf = async (request: RouteRequest<CreateTransferBody>) => {
    const accountId = await actingAccountIdForWrite(request, db);
    const commandId = idempotentCommandId(accountId, request.idempotencyKey!);
    if (request.sandboxScenario && environment !== 'sandbox') {
      throw new DomainError('invalid_request', 'sandbox scenarios exist only in the sandbox', 'Sandbox-Scenario');
    }
    const command = transferCommand(request.body, derivedUuid('transfer', commandId));
    return { accountId, commandId, command: request.sandboxScenario ? { ...command, scenario: request.sandboxScenario } : command };
  };
  const getOwn = (request: RouteRequest) => ownTransfer(reads, request);
  // The ledger alone writes a transfer: its metadata changes as a command, decided on the locked record.
  const updateOf = async (request: RouteRequest<BodyOf<typeof updateBody>>) => {
    const transfer = await getOwn(request);
    const command: TransferUpdate = { transfer_id: transfer.id, reversal_id: null, metadata: request.body.metadata as MetadataPatch };
    return { accountId: transfer.account_id, commandId: idempotentCommandId(transfer.account_id, request.idempotencyKey!), command };
  };
  return [
    withBody(createBodySchema, {
      method: 'POST', path: '/v1/transfers', operationId: 'createTransfer', tag: 'transfers',
      summary: 'Send money: internal (recipient_email) or to a bank account (recipient.bank), converted when the bank account is in another currency; from the main balance or a wallet (from_wallet_id)',
      auth: { kind: 'key', scope: 'transfers:write', moneyMoving: true }, idempotent: 'ledger', sandboxScenario: true,
      response: { status: 201, description: 'the transfer', schema: transferSchema },
      errors: ['insufficient_funds', 'recipient_not_found', 'phantom_recipient', 'sender_no_chain_wallet', 'external_send_blocked', 'invalid_currency', 'unsupported_pair', 'wallet_not_found'],
      errorNotes: { wallet_not_found: 'from_wallet_id is not an open wallet of the account' },
      provisional: async (request) => lateDecision((await commandOf(request)).command),
      provisionalSchema: provisionalTransferSchema,
      handler: async (request) => {
        const { accountId, commandId, command } = await commandOf(request);
        const decision = await ledger.execute('transfer.create', commandId, accountId, command, replyTimeoutMs, { key: request.idempotencyKey!, fingerprint: request.fingerprint! });
        return decision ? decisionAnswer(decision, 'transfer', transferAnswer) : lateDecision(command);
      },
    }),
    {
      method: 'GET', path: '/v1/transfers', operationId: 'listTransfers', tag: 'transfers',
      summary: "The caller's transfers, newest first; the filters combine", auth: { kind: 'key', scope: 'transfers:read' },
      query: listQuerySchema({
        status: { type: 'string', enum: TRANSFER_STATUSES }, ...listFilterSchemas('transfers'),
        recipient_email: { ...emailSchema, description: 'transfers whose recipient.email is this address, in any case' },
        account_id: { type: 'string', format: 'uuid', description: 'master key only' },
      }),
      response: { status: 200, description: 'a page of transfers', schema: listResponseSchema(transferSchema) },
      handler: async (request) => {
        const filter = { ...listFilterOf(request.query), status: request.query.status, recipientEmail: request.query.recipient_email };
        return { status: 200, body: await reads.page(actingAccountId(request), filter, request.query, transferView) };
      },
    },
    {
      method: 'GET', path: '/v1/transfers/{id}', operationId: 'getTransfer', tag: 'transfers',
      summary: 'One transfer, with its status history', auth: { kind: 'key', scope: 'transfers:read' },
      params: idParams,
      response: { status: 200, description: 'the transfer', schema: transferWithHistorySchema },
      errors: ['transfer_not_found', 'cross_account_access_denied'],
      handler: async (request) => {
        const row = await getOwn(request);
        return { status: 200, body: { ...transferView(row), status_history: row.status_history } };
      },
    },
    withBody(updateBody, {
      method: 'PATCH', path: '/v1/transfers/{id}', operationId: 'updateTransfer', tag: 'transfers',
      summary: 'Change a transfer\'s metadata: a key set to a string is set, a key set to null removed, the others kept',
      auth: { kind: 'key', scope: 'transfers:write' }, idempotent: 'ledger', params: idParams,
      response: { status: 200, description: 'the transfer, its metadata changed', schema: transferSchema },
      errors: ['transfer_not_found', 'cross_account_access_denied'],
      errorNotes: { invalid_request: 'among others: details names the metadata key at fault (metadata.order_id), also the first key past 50 after the change; nothing changes' },
      provisional: async (request) => updatePending((await getOwn(request)).id), provisionalSchema: updatePendingSchema,
      handler: async (request) => {
        const { accountId, commandId, command } = await updateOf(request);
        const decision = await ledger.execute('transfer.update', commandId, accountId, command, replyTimeoutMs, { key: request.idempotencyKey!, fingerprint: request.fingerprint! });
        return decision ? decisionAnswer(decision, 'transfer', transferAnswer) : updatePending(command.transfer_id);
      },
    }),
  ];
}
