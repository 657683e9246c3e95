// Wallets (DESIGN.md section 5g; SPEC.md section 4 listed them as planned): named pockets of one
// account, their balances and ledger entries, and POST /v1/wallet-transfers, which moves money
// between the main balance ("main") and the account's wallets, or to another account's wallet,
// as a ledger command like every movement of money. Another account's wallet is 404 here, as if
// it did not exist, except as a wallet transfer's destination.
import { MAIN_WALLET } from '../../ledger/chart';
import type { WalletTransfer } from '../../ledger/commands/wallet-transfer';
import { metadataPatchSchema, metadataSchema, metadataViewSchema, type Metadata, type MetadataPatch } from '../../ledger/metadata';
import { amountScaleRule, amountSchema, currencySchema, formatAmount, parseAmount, requireCurrency } from '../../ledger/money';
import type { WalletTransferred } from '../../ledger/outcome';
import { atQuerySchema, instantOf } from '../balances/at';
import type { Db } from '../db';
import { DomainError } from '../domain-error';
import { actingAccountId, actingAccountIdForWrite } from '../http/acting-account';
import { listQuerySchema, listResponseSchema } from '../http/pagination';
import { withBody, type BodyOf, type RouteDef, type RouteRequest, type RouteResult } from '../http/route';
import { createdId, derivedUuid, idempotentCommandId } from '../idempotency/derived-ids';
import { createdAnswer, RETRY_AFTER_SECONDS } from '../idempotency/guard';
import { decisionAnswer } from '../ledger-client/answers';
import { type LedgerClient } from '../ledger-client/client';
import { ledgerEntryView, walletView, type WalletReads, type WalletRow } from './reads';
import type { Wallets } from './service';
import { LOWER_CASE_UUID, walletSideSchema } from '../http/validation';

const EXAMPLE_WALLET = '3f1e8c2a-5b7d-4c9e-8a1f-2d4b6c8e0a13';
const walletIdSchema = { type: 'string', pattern: `^${LOWER_CASE_UUID}$`, examples: [EXAMPLE_WALLET], description: 'a wallet id (a UUID in lower case)' } as const;
const sideSchema = walletSideSchema('"main" (the account\'s main balance) or a wallet id (a UUID in lower case)');
const nameSchema = { type: 'string', minLength: 1, maxLength: 100 } as const;
const dateTime = { type: 'string', format: 'date-time' } as const;

const walletSchema = {
  type: 'object', required: ['id', 'name', 'metadata', 'status', 'created_at', 'updated_at', 'closed_at'],
  properties: {
    id: { type: 'string', format: 'uuid' }, name: { type: 'string' }, metadata: metadataViewSchema,
    status: { type: 'string', enum: ['open', 'closed'] }, created_at: dateTime, updated_at: dateTime, closed_at: { type: ['string', 'null'], format: 'date-time' },
  },
};
const balancesSchema = {
  type: 'object', required: ['wallet_id', 'balances'],
  properties: {
    wallet_id: { type: 'string' },
    balances: {
      type: 'array', description: 'one item per currency the wallet ever held: available (spendable), held (kept by active holds), pending (executing payouts; main balance only)',
      items: { type: 'object', required: ['currency', 'available', 'held', 'pending'], properties: { currency: { type: 'string' }, available: { type: 'string' }, held: { type: 'string' }, pending: { type: 'string' } } },
    },
  },
};
const entrySchema = {
  type: 'object', required: ['id', 'entry_id', 'kind', 'balance', 'currency', 'amount', 'balance_after', 'transfer_id', 'created_at'],
  properties: {
    id: { type: 'string', format: 'uuid', description: 'the posting' }, entry_id: { type: 'string', format: 'uuid', description: 'its journal entry (a wallet transfer\'s id, for one)' },
    kind: { type: 'string', description: 'what the entry was for: wallet_transfer, faucet_credit, internal_transfer, hold_create, hold_increment, hold_capture, hold_release, ...' },
    balance: { type: 'string', enum: ['available', 'held', 'pending'], description: 'the figure of the balance it moved' },
    currency: { type: 'string' }, amount: { type: 'string', description: 'signed: positive raised the figure' }, balance_after: { type: 'string' },
    transfer_id: { type: ['string', 'null'] }, created_at: dateTime,
  },
};
const walletTransferProperties = {
  id: { type: 'string', format: 'uuid' }, from_wallet_id: { type: 'string' }, to_wallet_id: { type: 'string' }, amount: { type: 'string' }, currency: { type: 'string' },
  description: { type: ['string', 'null'] }, created_at: dateTime,
};
const walletTransferSchema = {
  type: 'object', required: ['id', 'from_wallet_id', 'to_wallet_id', 'amount', 'currency', 'description', 'status', 'created_at'],
  properties: { ...walletTransferProperties, status: { type: 'string', const: 'completed' } },
};
const provisionalWalletTransferSchema = {
  type: 'object', required: ['id', 'from_wallet_id', 'to_wallet_id', 'amount', 'currency', 'description', 'status'],
  properties: { ...walletTransferProperties, status: { type: 'string', const: 'pending' } },
};
const walletTransferBody = {
  type: 'object', additionalProperties: false, required: ['from_wallet_id', 'to_wallet_id', 'amount', 'currency'], ...amountScaleRule(),
  examples: [{ from_wallet_id: 'main', to_wallet_id: EXAMPLE_WALLET, amount: '25.00', currency: 'USD', description: 'savings' }],
  properties: {
    from_wallet_id: { ...sideSchema, description: '"main" or one of the account\'s wallets' },
    to_wallet_id: { ...sideSchema, examples: [EXAMPLE_WALLET], description: '"main", one of the account\'s wallets, or another account\'s wallet' },
    amount: amountSchema, currency: currencySchema, description: { type: 'string', maxLength: 500 },
    account_id: { type: 'string', format: 'uuid', description: 'master key only' },
  },
} as const;
type WalletTransferBody = BodyOf<typeof walletTransferBody>;

const walletParams = { type: 'object', properties: { wallet_id: walletIdSchema } };
const sideParams = { type: 'object', properties: { wallet_id: sideSchema } };
const READ = { kind: 'key', scope: 'wallets:read' } as const;
const WRITE = { kind: 'key', scope: 'wallets:write' } as const;

function walletTransferAnswer(outcome: WalletTransferred): RouteResult {
  const { account_id: _, ...view } = outcome.wallet_transfer;
  return { status: 201, body: view };
}

/** The answer while the ledger has not decided: accepted, not yet done; repeat with the same key. */
function lateDecision(command: WalletTransfer): RouteResult {
  return {
    status: 202, final: false, headers: { 'Retry-After': RETRY_AFTER_SECONDS },
    body: {
      id: command.wallet_transfer_id, from_wallet_id: command.from_wallet_id, to_wallet_id: command.to_wallet_id,
      amount: formatAmount(command.amount, command.currency), currency: command.currency, description: command.description, status: 'pending',
    },
  };
}

export interface WalletRouteDeps { db: Db; reads: WalletReads; wallets: Wallets; ledger: LedgerClient; replyTimeoutMs: number }

export function walletRoutes({ db, reads, wallets, ledger, replyTimeoutMs }: WalletRouteDeps): RouteDef[] {
  /** The caller's wallet; another account's is as missing as one that never was (the master key reaches any). */
  const ownWallet = async (request: RouteRequest): Promise<WalletRow> => {
    const row = await reads.byId(request.params.wallet_id);
    const principal = request.principal!;
    if (!row || (!principal.isAdmin && principal.accountId !== row.account_id)) throw new DomainError('wallet_not_found', 'no such wallet', 'wallet_id');
    return row;
  };
  /** The account and wallet a balance or entry read names: "main" is the acting account's main balance. */
  const side = async (request: RouteRequest): Promise<{ accountId: string; walletId: string }> => {
    if (request.params.wallet_id === MAIN_WALLET) return { accountId: actingAccountId(request), walletId: MAIN_WALLET };
    const wallet = await ownWallet(request);
    return { accountId: wallet.account_id, walletId: wallet.id };
  };
  const commandOf = async (request: RouteRequest<WalletTransferBody>) => {
    const accountId = await actingAccountIdForWrite(request, db);
    const commandId = idempotentCommandId(accountId, request.idempotencyKey!);
    const currency = requireCurrency(request.body.currency);
    const command: WalletTransfer = {
      wallet_transfer_id: derivedUuid('wallet-transfer', commandId), from_wallet_id: request.body.from_wallet_id, to_wallet_id: request.body.to_wallet_id,
      amount: parseAmount(request.body.amount, currency).toFixed(), currency, description: request.body.description ?? null,
    };
    if (command.from_wallet_id === command.to_wallet_id) throw new DomainError('invalid_request', 'from_wallet_id and to_wallet_id are the same', 'to_wallet_id');
    return { accountId, commandId, command };
  };
  return [
    withBody({ type: 'object', additionalProperties: false, required: ['name'], properties: { name: nameSchema, metadata: metadataSchema, account_id: { type: 'string', format: 'uuid', description: 'master key only' } } }, {
      method: 'POST', path: '/v1/wallets', operationId: 'createWallet', tag: 'wallets',
      summary: 'Create a wallet: a named pocket of the account with balances of its own', auth: WRITE, idempotent: true,
      response: { status: 201, description: 'the wallet', schema: walletSchema },
      handler: async (request) => {
        const accountId = await actingAccountIdForWrite(request, db);
        const made = await wallets.create(createdId('wallet', request.executionId), accountId, request.body.name, (request.body.metadata ?? {}) as Metadata);
        return createdAnswer(walletView(made.row), made.created);
      },
    }),
    {
      method: 'GET', path: '/v1/wallets', operationId: 'listWallets', tag: 'wallets',
      summary: "The account's wallets, newest first (closed ones too)", auth: READ,
      query: listQuerySchema({ account_id: { type: 'string', format: 'uuid', description: 'master key only' } }),
      response: { status: 200, description: 'a page of wallets', schema: listResponseSchema(walletSchema) },
      handler: async (request) => ({ status: 200, body: await reads.page(actingAccountId(request), request.query, walletView) }),
    },
    {
      method: 'GET', path: '/v1/wallets/{wallet_id}', operationId: 'getWallet', tag: 'wallets',
      summary: 'One wallet', auth: READ, params: walletParams,
      response: { status: 200, description: 'the wallet', schema: walletSchema }, errors: ['wallet_not_found'],
      handler: async (request) => ({ status: 200, body: walletView(await ownWallet(request)) }),
    },
    withBody({ type: 'object', additionalProperties: false, minProperties: 1, properties: { name: nameSchema, metadata: metadataPatchSchema } }, {
      method: 'PATCH', path: '/v1/wallets/{wallet_id}', operationId: 'updateWallet', tag: 'wallets',
      summary: 'Rename a wallet, or change its metadata key by key (null removes a key, the others are kept)', auth: WRITE, idempotent: true, params: walletParams,
      response: { status: 200, description: 'the wallet', schema: walletSchema }, errors: ['wallet_not_found', 'wallet_closed'],
      errorNotes: { invalid_request: 'among others: details names the metadata key at fault (metadata.goal), also the first key past 50 after the change; nothing changes' },
      handler: async (request) => {
        const wallet = await ownWallet(request);
        return { status: 200, body: walletView(await wallets.update(wallet.id, request.body as { name?: string; metadata?: MetadataPatch })) };
      },
    }),
    {
      method: 'POST', path: '/v1/wallets/{wallet_id}/close', operationId: 'closeWallet', tag: 'wallets',
      summary: 'Close an empty wallet (no balance, no active hold); a closed wallet keeps its history and takes no money', auth: WRITE, idempotent: true, params: walletParams,
      response: { status: 200, description: 'the wallet, closed', schema: walletSchema }, errors: ['wallet_not_found', 'wallet_not_empty'],
      handler: async (request) => ({ status: 200, body: walletView(await wallets.close((await ownWallet(request)).id)) }),
    },
    {
      method: 'GET', path: '/v1/wallets/{wallet_id}/balances', operationId: 'getWalletBalances', tag: 'wallets',
      summary: 'A wallet\'s balances per currency ("main": the main balance, with its held and pending figures)', auth: READ, params: sideParams,
      query: { type: 'object', additionalProperties: false, properties: { account_id: { type: 'string', format: 'uuid', description: 'master key only, with "main"' }, at: atQuerySchema } },
      response: { status: 200, description: 'the balances (at: as they were at that instant)', schema: balancesSchema }, errors: ['wallet_not_found'],
      handler: async (request) => {
        const at = instantOf(request.query.at);
        const { accountId, walletId } = await side(request);
        return { status: 200, body: { wallet_id: walletId, balances: await reads.balances(accountId, walletId, at) } };
      },
    },
    {
      method: 'GET', path: '/v1/wallets/{wallet_id}/ledger-entries', operationId: 'listWalletLedgerEntries', tag: 'wallets',
      summary: "The postings on a wallet's balances, newest first (order=asc: oldest first)", auth: READ, params: sideParams,
      query: listQuerySchema({ order: { type: 'string', enum: ['desc', 'asc'], default: 'desc' }, account_id: { type: 'string', format: 'uuid', description: 'master key only, with "main"' } }),
      response: { status: 200, description: 'a page of postings', schema: listResponseSchema(entrySchema) }, errors: ['wallet_not_found'],
      handler: async (request) => {
        const { accountId, walletId } = await side(request);
        return { status: 200, body: await reads.entryPage(accountId, walletId, request.query, request.query.order ?? 'desc', ledgerEntryView) };
      },
    },
    withBody(walletTransferBody, {
      method: 'POST', path: '/v1/wallet-transfers', operationId: 'createWalletTransfer', tag: 'wallets',
      summary: 'Move money between the main balance and wallets, or to another account\'s wallet, through the ledger',
      auth: { ...WRITE, moneyMoving: true }, idempotent: 'ledger',
      response: { status: 201, description: 'the wallet transfer, completed', schema: walletTransferSchema },
      errors: ['insufficient_funds', 'wallet_not_found'],
      errorNotes: { wallet_not_found: 'from_wallet_id is not an open wallet of the account, or to_wallet_id is no open wallet (details names which)' },
      provisional: async (request) => lateDecision((await commandOf(request)).command),
      provisionalSchema: provisionalWalletTransferSchema,
      handler: async (request) => {
        const { accountId, commandId, command } = await commandOf(request);
        const decision = await ledger.execute('wallet.transfer', commandId, accountId, command, replyTimeoutMs, { key: request.idempotencyKey!, fingerprint: request.fingerprint! });
        return decision ? decisionAnswer(decision, 'wallet_transfer', walletTransferAnswer) : lateDecision(command);
      },
    }),
  ];
}
