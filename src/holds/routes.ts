// Holds (DESIGN.md section 5g): authorize now, raise the authorization, capture or void later. Each write is a ledger
// command decided in the ledger's rounds (ledger/commands/hold-*.ts), its Idempotency-Key kept by the
// ledger as on POST /v1/transfers; the ledger expires holds by itself (consumers/ledger/hold-expiry.ts).
// Another account's hold is 404, as if it did not exist.
import { HOLD_LIFETIME_DEFAULT_MS, HOLD_LIFETIME_MAX_MS, HOLD_STATUSES, type HoldRecord } from '../../ledger/holds';
import type { HoldCaptureCommand } from '../../ledger/commands/hold-capture';
import type { HoldCreate } from '../../ledger/commands/hold-create';
import type { HoldIncrement } from '../../ledger/commands/hold-increment';
import type { HoldRelease } from '../../ledger/commands/hold-release';
import type { HoldUpdate } from '../../ledger/commands/hold-update';
import { metadataPatchSchema, metadataSchema, metadataViewSchema, type Metadata, type MetadataPatch } from '../../ledger/metadata';
import { amountScaleRule, amountSchema, currencySchema, parseAmount, requireCurrency } from '../../ledger/money';
import type { HoldOutcome } from '../../ledger/outcome';
import { now } from '../clock';
import type { Db } from '../db';
import { DomainError } from '../domain-error';
import { actingAccountId, actingAccountIdForWrite } from '../http/acting-account';
import { listFilterOf, listFilterSchemas, listQuerySchema, listResponseSchema } from '../http/pagination';
import { withBody, type BodyOf, type RouteDef, type RouteRequest, type RouteResult } from '../http/route';
import { derivedUuid, idempotentCommandId } from '../idempotency/derived-ids';
import { RETRY_AFTER_SECONDS } from '../idempotency/guard';
import { decisionAnswer } from '../ledger-client/answers';
import { type LedgerClient } from '../ledger-client/client';
import { recipientSchema } from '../transfers/commands';
import { holdView, type HoldReads } from './reads';
import { LOWER_CASE_UUID, walletSideSchema } from '../http/validation';

const EXAMPLE_ID = '7c0d3e1a-9b2f-4e6d-8a5c-1f3b5d7e9a20';
const holdIdSchema = { type: 'string', pattern: `^${LOWER_CASE_UUID}$`, examples: [EXAMPLE_ID], description: 'a hold id (a UUID in lower case)' } as const;
const walletIdSchema = walletSideSchema('"main" (the main balance, the default) or one of the account\'s wallets');
const dateTime = { type: 'string', format: 'date-time' } as const;
const DAY_MS = 24 * 60 * 60 * 1000;

const holdSchema = {
  type: 'object',
  required: ['id', 'status', 'amount', 'currency', 'captured_amount', 'released_amount', 'wallet_id', 'description', 'metadata', 'captures', 'expires_at', 'created_at', 'updated_at'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    status: { type: 'string', enum: [...HOLD_STATUSES], description: 'active; captured (nothing left to capture); voided; expired (released by the ledger at expires_at)' },
    amount: { type: 'string', description: 'what the hold took from available' }, currency: { type: 'string' },
    captured_amount: { type: 'string', description: 'paid to recipients so far' },
    released_amount: { type: 'string', description: 'given back to available (void, expiry, the rest after a final capture)' },
    wallet_id: { type: 'string', description: '"main" or the wallet the hold is on' }, description: { type: ['string', 'null'] }, metadata: metadataViewSchema,
    captures: {
      type: 'array', description: 'each capture, oldest first, with the transfer that paid it',
      items: {
        type: 'object', required: ['id', 'amount', 'transfer_id', 'recipient_email', 'final', 'created_at'],
        properties: { id: { type: 'string', format: 'uuid' }, amount: { type: 'string' }, transfer_id: { type: 'string', format: 'uuid' }, recipient_email: { type: 'string' }, final: { type: 'boolean' }, created_at: dateTime },
      },
    },
    expires_at: dateTime, created_at: dateTime, updated_at: dateTime,
  },
};
const provisionalSchema = { type: 'object', required: ['id', 'status'], properties: { id: { type: 'string', format: 'uuid' }, status: { type: 'string', const: 'pending' } } };

const createBody = {
  type: 'object', additionalProperties: false, required: ['amount', 'currency'], ...amountScaleRule(),
  examples: [{ amount: '40.00', currency: 'USD', description: 'table 12', metadata: { booking: 'B-12' } }],
  properties: {
    amount: amountSchema, currency: currencySchema, wallet_id: walletIdSchema, metadata: metadataSchema,
    expires_at: { ...dateTime, description: `when the ledger releases the hold by itself: in the future, at most ${HOLD_LIFETIME_MAX_MS / DAY_MS} days ahead (default ${HOLD_LIFETIME_DEFAULT_MS / DAY_MS} days)` },
    description: { type: 'string', maxLength: 500 }, account_id: { type: 'string', format: 'uuid', description: 'master key only' },
  },
} as const;
const EITHER_FORM = 'either recipient_email (an internal transfer) or recipient with bank details in the hold\'s currency (an external one), not both';
const captureBody = {
  type: 'object', additionalProperties: false, required: ['amount'], description: EITHER_FORM,
  examples: [{ amount: '25.00', recipient_email: 'merchant@example.com', final: false }],
  // Exactly one form, as on POST /v1/transfers.
  allOf: [
    { if: { not: { required: ['recipient'] } }, then: { required: ['recipient_email'], 'x-message': `give ${EITHER_FORM}` } },
    { if: { required: ['recipient_email'] }, then: { not: { required: ['recipient'] }, 'x-message': `give ${EITHER_FORM}`, 'x-field': 'recipient' } },
  ],
  properties: {
    amount: { ...amountSchema, description: 'at most what is left of the hold, at the scale of its currency' },
    recipient_email: { type: 'string', format: 'email', maxLength: 254, description: 'paid as an internal transfer (POST /v1/transfers with recipient_email)' },
    recipient: { ...recipientSchema, description: 'paid to bank details as an external transfer through the fiat rail (the bank account\'s currency must be the hold\'s)' },
    final: { type: 'boolean', default: false, description: 'release what is left after this capture' },
    note: { type: 'string', maxLength: 500 },
  },
} as const;
const incrementBody = {
  type: 'object', additionalProperties: false, required: ['amount'],
  examples: [{ amount: '15.00' }],
  properties: {
    amount: { ...amountSchema, description: 'added to the hold\'s amount, in its currency at its scale: moved from the available balance of the side the hold is on (the main balance or its wallet) to held' },
  },
} as const;
const updateBody = {
  type: 'object', additionalProperties: false, required: ['metadata'],
  examples: [{ metadata: { booking: 'B-13', table: null } }],
  properties: { metadata: metadataPatchSchema },
} as const;
type CreateBody = BodyOf<typeof createBody>;
type CaptureBody = BodyOf<typeof captureBody>;
type IncrementBody = BodyOf<typeof incrementBody>;

const holdParams = { type: 'object', properties: { hold_id: holdIdSchema } };
const READ = { kind: 'key', scope: 'holds:read' } as const;
const WRITE = { kind: 'key', scope: 'holds:write' } as const;

const holdAnswer = (outcome: HoldOutcome): RouteResult => ({ status: outcome.created ? 201 : 200, body: holdView(outcome.hold) });

/** The answer while the ledger has not decided: accepted, not yet done; repeat with the same key. */
const lateDecision = (holdId: string): RouteResult => ({ status: 202, final: false, headers: { 'Retry-After': RETRY_AFTER_SECONDS }, body: { id: holdId, status: 'pending' } });

/**
 * expires_at as the ledger takes it: an instant within the longest lifetime. Whether it still lies
 * in the future is the ledger's to decide (ledger/commands/hold-create.ts), at decision time and once per
 * key: a request repeated under its key after a short hold's expiry must answer the hold its first
 * attempt made, not a refusal this request would earn on its own.
 */
function expiryOf(text: string | undefined, now: Date): string {
  if (text === undefined) return new Date(now.getTime() + HOLD_LIFETIME_DEFAULT_MS).toISOString();
  const at = new Date(text);
  if (Number.isNaN(at.getTime())) throw new DomainError('invalid_request', 'expires_at must be an ISO 8601 instant', 'expires_at');
  if (at.getTime() > now.getTime() + HOLD_LIFETIME_MAX_MS) throw new DomainError('invalid_request', `expires_at may lie at most ${HOLD_LIFETIME_MAX_MS / DAY_MS} days ahead`, 'expires_at');
  return at.toISOString();
}

export interface HoldRouteDeps { db: Db; reads: HoldReads; ledger: LedgerClient; replyTimeoutMs: number }

export function holdRoutes({ db, reads, ledger, replyTimeoutMs }: HoldRouteDeps): RouteDef[] {
  /** The caller's hold; another account's is as missing as one that never was (the master key reaches any). */
  const ownHold = async (request: RouteRequest): Promise<HoldRecord> => {
    const hold = await reads.byId(request.params.hold_id);
    const principal = request.principal!;
    if (!hold || (!principal.isAdmin && principal.accountId !== hold.account_id)) throw new DomainError('hold_not_found', 'no such hold', 'hold_id');
    return hold;
  };
  const keyed = (request: RouteRequest) => ({ key: request.idempotencyKey!, fingerprint: request.fingerprint! });
  const createCommand = async (request: RouteRequest<CreateBody>) => {
    const accountId = await actingAccountIdForWrite(request, db);
    const commandId = idempotentCommandId(accountId, request.idempotencyKey!);
    const currency = requireCurrency(request.body.currency);
    const walletId = request.body.wallet_id === undefined || request.body.wallet_id === 'main' ? null : request.body.wallet_id;
    const command: HoldCreate = {
      hold_id: derivedUuid('hold', commandId), amount: parseAmount(request.body.amount, currency).toFixed(), currency, wallet_id: walletId,
      expires_at: expiryOf(request.body.expires_at, await now(db, accountId)), description: request.body.description ?? null,
      ...(request.body.metadata === undefined ? {} : { metadata: request.body.metadata as Metadata }),
    };
    return { accountId, commandId, command };
  };
  const captureCommand = async (request: RouteRequest<CaptureBody>) => {
    const hold = await ownHold(request);
    const commandId = idempotentCommandId(hold.account_id, request.idempotencyKey!);
    const command: HoldCaptureCommand = {
      hold_id: hold.id, capture_id: derivedUuid('hold-capture', commandId), transfer_id: derivedUuid('transfer', commandId),
      amount: parseAmount(request.body.amount, hold.currency).toFixed(), final: request.body.final ?? false, note: request.body.note ?? null,
      ...(request.body.recipient ? { recipient: request.body.recipient } : { recipient_email: request.body.recipient_email }),
    };
    if (request.body.recipient && requireCurrency(request.body.recipient.bank.currency, 'recipient.bank.currency') !== hold.currency) {
      throw new DomainError('invalid_request', `a capture pays out in the hold's currency, ${hold.currency}`, 'recipient.bank.currency');
    }
    return { accountId: hold.account_id, commandId, command };
  };
  const incrementCommand = async (request: RouteRequest<IncrementBody>) => {
    const hold = await ownHold(request);
    const commandId = idempotentCommandId(hold.account_id, request.idempotencyKey!);
    const command: HoldIncrement = { hold_id: hold.id, amount: parseAmount(request.body.amount, hold.currency).toFixed() };
    return { accountId: hold.account_id, commandId, command };
  };
  return [
    withBody(createBody, {
      method: 'POST', path: '/v1/holds', operationId: 'createHold', tag: 'holds',
      summary: 'Authorize: move an amount from available to held until captured, voided or expired', auth: { ...WRITE, moneyMoving: true }, idempotent: 'ledger',
      response: { status: 201, description: 'the hold, active', schema: holdSchema },
      errors: ['insufficient_funds', 'wallet_not_found'],
      provisional: async (request) => lateDecision((await createCommand(request)).command.hold_id), provisionalSchema,
      handler: async (request) => {
        const { accountId, commandId, command } = await createCommand(request);
        const decision = await ledger.execute('hold.create', commandId, accountId, command, replyTimeoutMs, keyed(request));
        return decision ? decisionAnswer(decision, 'hold', holdAnswer) : lateDecision(command.hold_id);
      },
    }),
    withBody(captureBody, {
      method: 'POST', path: '/v1/holds/{hold_id}/capture', operationId: 'captureHold', tag: 'holds',
      summary: 'Capture: pay part or all of what is left of a hold to a recipient, as POST /v1/transfers pays one; final releases the rest',
      auth: { ...WRITE, moneyMoving: true }, idempotent: 'ledger', params: holdParams,
      response: { status: 200, description: 'the hold, with the new capture and its transfer', schema: holdSchema },
      errors: ['hold_not_found', 'hold_not_active', 'hold_exceeded', 'recipient_not_found', 'phantom_recipient', 'external_send_blocked'],
      errorNotes: { hold_not_active: 'the hold was captured in full, voided or expired: nothing changes', hold_exceeded: 'the amount is more than is left of the hold: nothing changes' },
      provisional: async (request) => lateDecision((await captureCommand(request)).command.hold_id), provisionalSchema,
      handler: async (request) => {
        const { accountId, commandId, command } = await captureCommand(request);
        const decision = await ledger.execute('hold.capture', commandId, accountId, command, replyTimeoutMs, keyed(request));
        return decision ? decisionAnswer(decision, 'hold', holdAnswer) : lateDecision(command.hold_id);
      },
    }),
    withBody(incrementBody, {
      method: 'POST', path: '/v1/holds/{hold_id}/increment', operationId: 'incrementHold', tag: 'holds',
      summary: 'Increment: raise an active hold\'s amount (an incremental authorization), moving the increment from available to held',
      auth: { ...WRITE, moneyMoving: true }, idempotent: 'ledger', params: holdParams,
      response: { status: 200, description: 'the hold, its amount raised: what is left to capture grows by the increment', schema: holdSchema },
      errors: ['hold_not_found', 'hold_not_active', 'insufficient_funds'],
      errorNotes: {
        hold_not_active: 'the hold was captured in full (or finally), voided or expired: nothing changes',
        insufficient_funds: 'the available balance of the side the hold is on (the main balance or its wallet) is below the amount: nothing changes',
      },
      provisional: async (request) => lateDecision((await incrementCommand(request)).command.hold_id), provisionalSchema,
      handler: async (request) => {
        const { accountId, commandId, command } = await incrementCommand(request);
        const decision = await ledger.execute('hold.increment', commandId, accountId, command, replyTimeoutMs, keyed(request));
        return decision ? decisionAnswer(decision, 'hold', holdAnswer) : lateDecision(command.hold_id);
      },
    }),
    {
      method: 'POST', path: '/v1/holds/{hold_id}/void', operationId: 'voidHold', tag: 'holds',
      summary: 'Void: release all that is left of an active hold', auth: WRITE, idempotent: 'ledger', params: holdParams,
      response: { status: 200, description: 'the hold, voided', schema: holdSchema },
      errors: ['hold_not_found', 'hold_not_active'],
      errorNotes: { hold_not_active: 'the hold was captured in full (or finally), voided already or expired: nothing changes' },
      provisional: async (request) => lateDecision((await ownHold(request)).id), provisionalSchema,
      handler: async (request) => {
        const hold = await ownHold(request);
        const commandId = idempotentCommandId(hold.account_id, request.idempotencyKey!);
        const command: HoldRelease = { hold_id: hold.id };
        const decision = await ledger.execute('hold.void', commandId, hold.account_id, command, replyTimeoutMs, keyed(request));
        return decision ? decisionAnswer(decision, 'hold', holdAnswer) : lateDecision(hold.id);
      },
    },
    {
      method: 'GET', path: '/v1/holds', operationId: 'listHolds', tag: 'holds',
      summary: "The account's holds, newest first", auth: READ,
      query: listQuerySchema({
        status: { type: 'string', enum: [...HOLD_STATUSES] }, wallet_id: walletIdSchema, ...listFilterSchemas('holds'),
        account_id: { type: 'string', format: 'uuid', description: 'master key only' },
      }),
      response: { status: 200, description: 'a page of holds', schema: listResponseSchema(holdSchema) },
      handler: async (request) => {
        const { status, wallet_id } = request.query;
        return { status: 200, body: await reads.page(actingAccountId(request), { ...listFilterOf(request.query), status, wallet_id }, request.query, holdView) };
      },
    },
    {
      method: 'GET', path: '/v1/holds/{hold_id}', operationId: 'getHold', tag: 'holds',
      summary: 'One hold, with each capture', auth: READ, params: holdParams,
      response: { status: 200, description: 'the hold', schema: holdSchema }, errors: ['hold_not_found'],
      handler: async (request) => ({ status: 200, body: holdView(await ownHold(request)) }),
    },
    withBody(updateBody, {
      method: 'PATCH', path: '/v1/holds/{hold_id}', operationId: 'updateHold', tag: 'holds',
      summary: 'Change a hold\'s metadata (whatever its status): a key set to a string is set, a key set to null removed, the others kept',
      auth: WRITE, idempotent: 'ledger', params: holdParams,
      response: { status: 200, description: 'the hold, its metadata changed', schema: holdSchema },
      errors: ['hold_not_found'],
      errorNotes: { invalid_request: 'among others: details names the metadata key at fault (metadata.booking), also the first key past 50 after the change; nothing changes' },
      provisional: async (request) => lateDecision((await ownHold(request)).id), provisionalSchema,
      handler: async (request) => {
        const hold = await ownHold(request);
        const command: HoldUpdate = { hold_id: hold.id, metadata: request.body.metadata as MetadataPatch };
        const commandId = idempotentCommandId(hold.account_id, request.idempotencyKey!);
        const decision = await ledger.execute('hold.update', commandId, hold.account_id, command, replyTimeoutMs, keyed(request));
        return decision ? decisionAnswer(decision, 'hold', holdAnswer) : lateDecision(hold.id);
      },
    }),
  ];
}
