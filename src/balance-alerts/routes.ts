// Balance alerts (DESIGN.md section 5g): create, list, read and delete the thresholds the ledger
// watches. An alert is a setting, not a movement of money, so these routes write its row
// directly; the ledger reads the alerts of a round's accounts after taking its locks and decides
// each crossing in that round (ledger/alerts.ts), announcing it as `balance.threshold_crossed`.
// Another account's alert is 404, as if it did not exist.
import type { BalanceAlertRecord } from '../../ledger/alerts';
import { amountSchema, currencySchema, formatAmount, parseAmount, requireCurrency, type Currency } from '../../ledger/money';
import type { Db } from '../db';
import { keysetPage } from '../db/keyset-pages';
import { DomainError } from '../domain-error';
import { actingAccountId, actingAccountIdForWrite } from '../http/acting-account';
import { listQuerySchema, listResponseSchema } from '../http/pagination';
import { withBody, type RouteDef, type RouteRequest } from '../http/route';
import { createdId } from '../idempotency/derived-ids';
import { createdAnswer } from '../idempotency/guard';
import { LOWER_CASE_UUID, walletSideSchema } from '../http/validation';

const alertIdSchema = { type: 'string', pattern: `^${LOWER_CASE_UUID}$`, examples: ['5a8e2c1d-3f4b-4d6e-9a7c-0b1d2e3f4a5b'], description: 'a balance alert id (a UUID in lower case)' } as const;
const walletIdSchema = walletSideSchema('"main" (the main balance, the default) or one of the account\'s wallets');
const dateTime = { type: 'string', format: 'date-time' } as const;

const alertSchema = {
  type: 'object', required: ['id', 'currency', 'wallet_id', 'below', 'above', 'created_at'],
  properties: {
    id: { type: 'string', format: 'uuid' }, currency: { type: 'string' }, wallet_id: { type: 'string', description: '"main" or the wallet watched' },
    below: { type: ['string', 'null'], description: 'fires when available goes from at or over this amount to under it' },
    above: { type: ['string', 'null'], description: 'fires when available goes from at or under this amount to over it' },
    created_at: dateTime,
  },
};
const thresholdSchema = { ...amountSchema, description: 'an amount at the currency\'s scale, compared with the available balance' };
const createBody = {
  type: 'object', additionalProperties: false, required: ['currency'], description: 'exactly one of below or above',
  examples: [{ currency: 'USD', below: '100.00' }],
  allOf: [
    { if: { not: { required: ['below'] } }, then: { required: ['above'], 'x-message': 'give exactly one of below or above', 'x-field': 'below' } },
    { if: { required: ['below'] }, then: { not: { required: ['above'] }, 'x-message': 'give exactly one of below or above', 'x-field': 'above' } },
  ],
  properties: {
    currency: currencySchema, wallet_id: walletIdSchema, below: thresholdSchema, above: thresholdSchema,
    account_id: { type: 'string', format: 'uuid', description: 'master key only' },
  },
} as const;

const alertParams = { type: 'object', properties: { alert_id: alertIdSchema } };
const READ = { kind: 'key', scope: 'balance_alerts:read' } as const;
const WRITE = { kind: 'key', scope: 'balance_alerts:write' } as const;

type AlertRow = BalanceAlertRecord & { created_at: Date };

export const alertView = (row: AlertRow) => {
  const threshold = formatAmount(row.threshold, row.currency);
  return {
    id: row.id, currency: row.currency, wallet_id: row.wallet_id ?? 'main',
    below: row.direction === 'below' ? threshold : null, above: row.direction === 'above' ? threshold : null, created_at: row.created_at.toISOString(),
  };
};

/**
 * The most alerts one balance (an account's wallet and currency) may have: each is weighed in
 * every round that moves the balance, and each crossing is an event of that round.
 */
export const ALERTS_PER_BALANCE_MAX = 20;

export function balanceAlertRoutes(db: Db): RouteDef[] {
  const ownAlert = async (request: RouteRequest): Promise<AlertRow> => {
    const row: AlertRow | undefined = await db('balance_alerts').where('id', request.params.alert_id).first();
    const principal = request.principal!;
    if (!row || (!principal.isAdmin && principal.accountId !== row.account_id)) throw new DomainError('resource_not_found', 'no such balance alert', 'alert_id');
    return row;
  };
  return [
    withBody(createBody, {
      method: 'POST', path: '/v1/balance-alerts', operationId: 'createBalanceAlert', tag: 'balance-alerts',
      summary: 'Watch an available balance: balance.threshold_crossed once each time it crosses below or above the amount', auth: WRITE, idempotent: true,
      response: { status: 201, description: 'the alert', schema: alertSchema }, errors: ['wallet_not_found', 'balance_alert_limit_exceeded'],
      errorNotes: { balance_alert_limit_exceeded: `the balance (its wallet and currency) has ${ALERTS_PER_BALANCE_MAX} alerts already: delete one first; nothing is created` },
      handler: async (request) => {
        const accountId = await actingAccountIdForWrite(request, db);
        const currency: Currency = requireCurrency(request.body.currency);
        const direction = request.body.below !== undefined ? 'below' : 'above';
        const threshold = parseAmount((request.body.below ?? request.body.above)!, currency, direction).toFixed();
        const walletId = request.body.wallet_id === undefined || request.body.wallet_id === 'main' ? null : request.body.wallet_id;
        if (walletId) {
          const wallet = await db('wallets').where({ id: walletId, account_id: accountId }).whereNull('closed_at').first('id');
          if (!wallet) throw new DomainError('wallet_not_found', 'no such open wallet', 'wallet_id');
        }
        const id = createdId('balance-alert', request.executionId);
        const made = await db.transaction(async (trx) => {
          // Alerts of one balance are counted under a lock of that balance, so concurrent creates stop at the bound.
          await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [`balance_alerts:${accountId}:${walletId ?? 'main'}:${currency}`]);
          // Made by this key's execution before its request died: that alert is the answer.
          const before: AlertRow | undefined = await trx('balance_alerts').where({ id }).first();
          if (before) return { row: before, created: false };
          const [{ n }] = await trx('balance_alerts').where({ account_id: accountId, currency }).where((q) => (walletId ? q.where('wallet_id', walletId) : q.whereNull('wallet_id'))).count({ n: '*' });
          if (Number(n) >= ALERTS_PER_BALANCE_MAX) {
            throw new DomainError('balance_alert_limit_exceeded', `a balance takes at most ${ALERTS_PER_BALANCE_MAX} alerts (this one has ${n}): delete one first`, 'wallet_id');
          }
          const [inserted] = await trx('balance_alerts').insert({ id, account_id: accountId, wallet_id: walletId, currency, direction, threshold }).returning('*');
          return { row: inserted as AlertRow, created: true };
        });
        return createdAnswer(alertView(made.row), made.created);
      },
    }),
    {
      method: 'GET', path: '/v1/balance-alerts', operationId: 'listBalanceAlerts', tag: 'balance-alerts',
      summary: "The account's balance alerts, newest first", auth: READ,
      query: listQuerySchema({ account_id: { type: 'string', format: 'uuid', description: 'master key only' } }),
      response: { status: 200, description: 'a page of balance alerts', schema: listResponseSchema(alertSchema) },
      handler: async (request) => ({
        status: 200, body: await keysetPage(db('balance_alerts').where('account_id', actingAccountId(request)).select('*'), 'balance_alerts', request.query, alertView),
      }),
    },
    {
      method: 'GET', path: '/v1/balance-alerts/{alert_id}', operationId: 'getBalanceAlert', tag: 'balance-alerts',
      summary: 'One balance alert', auth: READ, params: alertParams,
      response: { status: 200, description: 'the alert', schema: alertSchema }, errors: ['resource_not_found'],
      handler: async (request) => ({ status: 200, body: alertView(await ownAlert(request)) }),
    },
    {
      method: 'DELETE', path: '/v1/balance-alerts/{alert_id}', operationId: 'deleteBalanceAlert', tag: 'balance-alerts',
      summary: 'Stop watching: rounds decided after the delete fire nothing for it', auth: WRITE, idempotent: true, params: alertParams,
      response: { status: 200, description: 'deleted', schema: { type: 'object', required: ['id', 'deleted'], properties: { id: { type: 'string', format: 'uuid' }, deleted: { type: 'boolean' } } } },
      errors: ['resource_not_found'],
      handler: async (request) => {
        const alert = await ownAlert(request);
        await db('balance_alerts').where('id', alert.id).delete();
        return { status: 200, body: { id: alert.id, deleted: true } };
      },
    },
  ];
}
