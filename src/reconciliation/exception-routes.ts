// The reconciliation exceptions queue (DESIGN.md section 5e), for finance (master key): list it
// oldest first (JSON pages, or all of it as CSV), read one, resolve one as matched, explained or
// adjusted.
import type { Principal } from '../auth/rules';
import { instantOf, windowBound, windowEndOf } from '../http/dates';
import { listQuerySchema, listResponseSchema } from '../http/pagination';
import { withBody, type RouteDef } from '../http/route';
import { csvText, streamed, wantsCsv } from '../http/streamed-answers';
import { idParams } from '../http/validation';
import { PARTNER_SLUGS } from '../partners/registry';
import { EXCEPTION_CSV_COLUMNS, type ExceptionDesk, type ExceptionFilter } from './exceptions';
import { CANDIDATES_SCHEMA, MOVEMENTS_SCHEMA } from './schemas';

const nullableText = { type: ['string', 'null'] };
const STATUSES = ['open', 'resolving', 'resolved'];
const CATEGORIES = ['ledger_only', 'statement_only', 'mismatched', 'late_completion', 'ambiguous', 'batch'];
const EXCEPTION_SCHEMA = {
  type: 'object',
  required: [
    'id', 'reconciliation_id', 'partner', 'category', 'transfer_id', 'reheld_amount', 'receivable_amount', 'ledger_entry_id', 'statement_line_id', 'reference', 'currency', 'ledger_amount', 'statement_amount',
    'field', 'ledger_value', 'statement_value', 'reason', 'amount_tolerance', 'status', 'resolution', 'note', 'resolved_by', 'resolved_at',
    'resolved_by_reconciliation_id', 'counterpart_exception_id', 'adjustment_entry_id', 'created_at', 'history', 'reverses_exception_id', 'movements', 'candidates',
  ],
  properties: {
    id: { type: 'string', format: 'uuid' },
    reconciliation_id: { type: ['string', 'null'], format: 'uuid', description: 'the report that first reported it; null for a late_completion, which no report raises' },
    partner: { type: 'string' },
    category: {
      type: 'string', enum: CATEGORIES,
      description: 'ambiguous: a side without a reference that several others fit (candidates lists them; resolve it as matched naming one); batch: a batch line whose listed movements (movements) add up to another amount, one exception whose adjustment posts statement_amount − ledger_amount; late_completion: the partner paid a transfer after the ledger had failed it; the ledger completed it, holding the amount again from the sender (the rest owed through the receivable), and opened this once',
    },
    transfer_id: { type: ['string', 'null'], format: 'uuid', description: 'late_completion: the transfer completed late' },
    reheld_amount: { ...nullableText, description: 'late_completion: held again from the sender\'s available balance' },
    receivable_amount: { ...nullableText, description: 'late_completion: what the sender\'s balance did not cover, owed through sys:receivable:late_completion:<currency>' },
    ledger_entry_id: { type: ['string', 'null'], format: 'uuid', description: 'the journal entry of the movement on the partner\'s settlement account; for a late_completion, the entry that held the amount again' },
    statement_line_id: { ...nullableText, description: 'the partner statement\'s line' },
    reference: { ...nullableText, description: 'the partner\'s payment id' }, currency: { type: 'string' },
    ledger_amount: { ...nullableText, description: 'signed as the partner sees it: + credited to us' },
    statement_amount: { ...nullableText, description: 'the line\'s net (amount − fee)' },
    field: { type: ['string', 'null'], enum: ['currency', 'fee', 'amount', 'value_date', 'reference', null] },
    ledger_value: nullableText, statement_value: nullableText, reason: { type: 'string' },
    amount_tolerance: { type: 'string', description: 'the report\'s: how far a pair matched by hand may differ' },
    status: { type: 'string', enum: STATUSES, description: 'resolving: an adjustment is in flight through the ledger; only the request that asked for it resolves it (another answers 409 exception_resolving)' },
    resolution: { type: ['string', 'null'], enum: ['matched', 'explained', 'adjusted', null] },
    note: { ...nullableText, description: 'why, as finance (or the run that settled it) wrote it' },
    resolved_by: { ...nullableText, description: 'the credential that resolved it (master_key, key:<key id> or session:<user id>), or reconciliation:<id> for a later run' },
    resolved_at: { type: ['string', 'null'], format: 'date-time' },
    resolved_by_reconciliation_id: { type: ['string', 'null'], format: 'uuid', description: 'the later run whose matching settled it' },
    counterpart_exception_id: { type: ['string', 'null'], format: 'uuid', description: 'matched by hand: the exception of the other side' },
    adjustment_entry_id: { type: ['string', 'null'], format: 'uuid', description: 'adjusted: the journal entry between settlement and sys:reconciliation:suspense:<currency>' },
    created_at: { type: 'string', format: 'date-time' },
    reverses_exception_id: {
      type: ['string', 'null'], format: 'uuid',
      description: 'the adjusted exception whose missing side has since arrived: resolving this one adjusted posts the reverse of that adjustment',
    },
    history: {
      type: 'array', description: 'what happened to it, oldest first',
      items: {
        type: 'object', required: ['at', 'action', 'by', 'note'],
        properties: {
          at: { type: 'string', format: 'date-time' }, action: { type: 'string', enum: ['opened', 'resolving', 'resolved', 'auto_closed', 'reopened'] },
          by: { type: 'string', description: 'reconciliation:<id>, ledger, or the credential' }, note: nullableText,
        },
      },
    },
    movements: { ...MOVEMENTS_SCHEMA, description: 'the ledger side: one movement or none; a batch: every movement its line lists' },
    candidates: { ...CANDIDATES_SCHEMA, description: 'an ambiguous exception\'s possible other sides; empty otherwise' },
  },
} as const;

/** Who resolves, as resolved_by names it: the credential, never its secret. */
export function credentialName(principal: Pick<Principal, 'kind' | 'credentialId' | 'accountId'>): string {
  if (principal.kind === 'master') return 'master_key';
  if (principal.kind === 'session') return `session:${principal.accountId}`;
  return `key:${principal.credentialId}`;
}

const ONLY_MATCHED = { not: {}, 'x-message': 'only a matched resolution names another side' };
const RESOLVE_BODY = {
  type: 'object', additionalProperties: false, required: ['resolution', 'note'],
  description: 'matched names the other side with statement_line_id (for a ledger_only exception) or ledger_entry_id (for a statement_only one), or, for an ambiguous exception, the candidate chosen (ledger_entry_ids: the set chosen, for a line ambiguous between sets); explained and adjusted name none',
  examples: [{ resolution: 'explained', note: 'the partner confirmed the fee by email on 2026-11-24' }],
  properties: {
    resolution: {
      type: 'string', enum: ['matched', 'explained', 'adjusted'],
      description: 'matched: paired by hand, both exceptions close; explained: no money moves (the resolution of a late_completion); adjusted: the ledger posts the difference (statement − ledger) between the partner\'s settlement account and suspense',
    },
    note: { type: 'string', minLength: 1, maxLength: 1000, pattern: '\\S', description: 'why: kept with the exception and announced' },
    statement_line_id: { type: 'string', minLength: 1, maxLength: 200, description: 'matched: the line of an open statement_only exception of the same partner and currency' },
    ledger_entry_id: { type: 'string', format: 'uuid', description: 'matched: the entry of an open ledger_only exception of the same partner and currency' },
    ledger_entry_ids: {
      type: 'array', items: { type: 'string', format: 'uuid' }, minItems: 2, maxItems: 60, uniqueItems: true,
      description: 'matched, for an ambiguous line between sets (60 + 40 or 50 + 50): the candidate entries chosen, whose amounts add up to the line',
    },
  },
  // matched names exactly one other side (or set); the others name none.
  allOf: [
    {
      if: { properties: { resolution: { const: 'matched' } }, required: ['resolution'], not: { anyOf: [{ required: ['statement_line_id'] }, { required: ['ledger_entry_ids'] }] } },
      then: { required: ['ledger_entry_id'], 'x-message': 'matched names the other side: statement_line_id, ledger_entry_id or ledger_entry_ids', 'x-field': 'statement_line_id' },
    },
    { if: { required: ['statement_line_id'] }, then: { not: { required: ['ledger_entry_id'] }, 'x-message': 'name statement_line_id or ledger_entry_id, not both', 'x-field': 'ledger_entry_id' } },
    { if: { required: ['ledger_entry_ids'] }, then: { not: { anyOf: [{ required: ['ledger_entry_id'] }, { required: ['statement_line_id'] }] }, 'x-message': 'name ledger_entry_ids alone: a set, not a side besides', 'x-field': 'ledger_entry_ids' } },
    {
      if: { properties: { resolution: { enum: ['explained', 'adjusted'] } }, required: ['resolution'] },
      then: { properties: { statement_line_id: ONLY_MATCHED, ledger_entry_id: ONLY_MATCHED, ledger_entry_ids: ONLY_MATCHED } },
    },
  ],
} as const;

export function reconciliationExceptionRoutes(desk: ExceptionDesk): RouteDef[] {
  return [
    {
      method: 'GET', path: '/v1/reconciliation-exceptions', operationId: 'listReconciliationExceptions', tag: 'finance',
      summary: 'The exceptions of stored reconciliation reports and the transfers completed late, oldest first (master key)', auth: { kind: 'admin' },
      query: listQuerySchema({
        partner: { type: 'string', enum: [...PARTNER_SLUGS] }, status: { type: 'string', enum: STATUSES }, category: { type: 'string', enum: CATEGORIES },
        from: windowBound('from', 'raised at or after'), to: windowBound('to', 'raised before'),
        format: { type: 'string', enum: ['json', 'csv'], description: 'csv: every exception the filters keep (no paging), as Accept: text/csv gives' },
      }),
      response: {
        status: 200, description: 'a page of exceptions; next_cursor goes on to later ones', schema: listResponseSchema(EXCEPTION_SCHEMA),
        alternatives: [{ contentType: 'text/csv', schema: csvText(`every exception the filters keep, oldest first, with a header row: ${EXCEPTION_CSV_COLUMNS.join(',')}`) }],
      },
      handler: async (request) => {
        const { partner, status, category, from, to, format, ...page } = request.query as {
          partner?: string; status?: ExceptionFilter['status']; category?: ExceptionFilter['category']; from?: string; to?: string; format?: 'json' | 'csv'; limit: number; before?: string; offset?: number;
        };
        const filter: ExceptionFilter = { partner, status, category, from: from === undefined ? undefined : instantOf(from, 'from'), to: to === undefined ? undefined : windowEndOf(to, 'to') };
        if (format === 'csv' || (format === undefined && wantsCsv(request.koa))) {
          return { status: 200, body: streamed(desk.listCsv(filter)), headers: { 'Content-Type': 'text/csv; charset=utf-8' } };
        }
        return { status: 200, body: await desk.list(page, filter) };
      },
    },
    {
      method: 'GET', path: '/v1/reconciliation-exceptions/{id}', operationId: 'getReconciliationException', tag: 'finance',
      summary: 'One exception, with its resolution once resolved (master key)', auth: { kind: 'admin' }, params: idParams,
      response: { status: 200, description: 'the exception', schema: EXCEPTION_SCHEMA },
      errors: ['reconciliation_exception_not_found'],
      handler: async (request) => ({ status: 200, body: await desk.get((request.params as { id: string }).id) }),
    },
    withBody(RESOLVE_BODY, {
      method: 'POST', path: '/v1/reconciliation-exceptions/{id}/resolve', operationId: 'resolveReconciliationException', tag: 'finance',
      summary: 'Resolve an open exception: matched by hand, explained, or adjusted through the ledger (master key); the same request again answers its first resolution', auth: { kind: 'admin' },
      idempotent: true, params: idParams,
      response: { status: 200, description: 'the exception, resolved (for matched, the one named in the path)', schema: EXCEPTION_SCHEMA },
      errors: ['reconciliation_exception_not_found', 'exception_already_resolved', 'exception_resolving', 'already_matched', 'exception_pair_mismatch', 'nothing_to_adjust', 'service_unavailable'],
      errorNotes: {
        exception_already_resolved: 'resolved before by another request (the same request again answers its resolution)',
        already_matched: 'matched: the movement or line named is matched already (by a run, or by hand with another side); details names it',
        exception_resolving: 'an adjustment asked by another request is in flight through the ledger; repeat that request to finish it',
        service_unavailable: 'the ledger has not posted the adjustment yet: the exception is resolving; repeat the request (the same Idempotency-Key or body) to finish it',
      },
      handler: async (request) => {
        const { id } = request.params as { id: string };
        const { resolution, note, statement_line_id: statementLineId, ledger_entry_id: ledgerEntryId, ledger_entry_ids: ledgerEntryIds } = request.body;
        const by = credentialName(request.principal!);
        return { status: 200, body: await desk.resolve(id, { resolution, note, statementLineId, ledgerEntryId, ledgerEntryIds: ledgerEntryIds as string[] | undefined, by }) };
      },
    }),
  ];
}
