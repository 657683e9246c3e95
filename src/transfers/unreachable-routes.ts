// The operator's view of executing transfers whose partner the executing deadline could not ask
// (master key): their funds stay held until the partner answers, so an operator follows them up
// with the partner. Listed longest unreachable first and counted by partner
// (src/transfers/unreachable-reads.ts). Beside /v1/dead-letters and /v1/outbox/set-aside.
import { formatAmount } from '../../ledger/money';
import { PARTNER_SLUGS } from '../partners/registry';
import type { UnreachableTransferRow, UnreachableTransfers } from './unreachable-reads';
import { listQuerySchema, listResponseSchema } from '../http/pagination';
import type { RouteDef } from '../http/route';

const UNREACHABLE_TRANSFER_SCHEMA = {
  type: 'object',
  required: ['id', 'account_id', 'partner', 'amount', 'currency', 'payout_amount', 'payout_currency', 'executing_since', 'unreachable_since', 'reason', 'attempts', 'instruction_attempt'],
  properties: {
    id: { type: 'string', format: 'uuid', description: 'the transfer (GET /v1/transfers/{id} with the master key)' },
    account_id: { type: 'string', format: 'uuid', description: 'the sending account' },
    partner: { type: 'string', enum: [...PARTNER_SLUGS] },
    amount: { type: 'string', description: "what is held from the sender's balance, in currency" },
    currency: { type: 'string' },
    payout_amount: { type: 'string', description: 'what the partner is to pay, in payout_currency' },
    payout_currency: { type: 'string' },
    executing_since: { type: 'string', format: 'date-time', description: 'when the transfer last changed (entered executing)' },
    unreachable_since: { type: 'string', format: 'date-time', description: 'the first deadline check that could not reach the partner' },
    reason: { type: ['string', 'null'], description: 'what the last check met (the partner error)' },
    attempts: { type: 'integer', minimum: 1, description: 'deadline checks that could not reach the partner; one every TRANSFER_DEADLINE_CHECK_MS until it answers' },
    instruction_attempt: { type: 'integer', description: 'the last instruction attempt claimed by a dispatcher (-1: none ran)' },
  },
};

const view = (row: UnreachableTransferRow) => ({
  id: row.id, account_id: row.account_id, partner: row.partner, amount: formatAmount(row.amount, row.currency), currency: row.currency,
  payout_amount: formatAmount(row.payout_amount, row.payout_currency), payout_currency: row.payout_currency,
  executing_since: row.executing_since.toISOString(), unreachable_since: row.unreachable_since.toISOString(), reason: row.unreachable_reason,
  attempts: row.unreachable_checks, instruction_attempt: row.instruction_attempt,
});

export function unreachableTransferRoutes(transfers: UnreachableTransfers): RouteDef[] {
  return [
    {
      method: 'GET', path: '/v1/unreachable-transfers', operationId: 'listUnreachableTransfers', tag: 'operations',
      summary: 'Executing transfers past their deadline whose partner could not be asked; funds held; longest unreachable first (master key)',
      auth: { kind: 'admin' },
      query: listQuerySchema({ partner: { type: 'string', enum: [...PARTNER_SLUGS], description: 'only those of this partner' } }),
      response: { status: 200, description: 'a page of unreachable transfers, oldest mark first', schema: listResponseSchema(UNREACHABLE_TRANSFER_SCHEMA) },
      handler: async (request) => {
        const { partner, ...page } = request.query as { partner?: string; limit: number; before?: string; offset?: number };
        return { status: 200, body: await transfers.page({ partner }, page, view) };
      },
    },
    {
      method: 'GET', path: '/v1/unreachable-transfers/summary', operationId: 'countUnreachableTransfers', tag: 'operations',
      summary: 'How many executing transfers wait on a partner that could not be asked, by partner (master key)', auth: { kind: 'admin' },
      response: {
        status: 200, description: 'the counts',
        schema: { type: 'object', required: ['waiting'], properties: { waiting: { type: 'object', additionalProperties: { type: 'integer' }, description: 'by partner' } } },
      },
      handler: async () => ({ status: 200, body: { waiting: await transfers.waiting() } }),
    },
  ];
}
