// Reconciliation of the ledger against partner statements (DESIGN.md section 5e), for the
// operator (master key): run one (or a dry run), list the stored reports, read one as JSON or,
// with every item including the matched ones, as CSV.
import { DomainError } from '../domain-error';
import { dayOrInstant, utcDayOf } from '../http/dates';
import { listQuerySchema, listResponseSchema } from '../http/pagination';
import { withBody, type RouteDef } from '../http/route';
import { csvText, streamed, wantsCsv } from '../http/streamed-answers';
import { idParams } from '../http/validation';
import { PARTNER_SLUGS, type PartnerSlug } from '../partners/registry';
import { ITEM_CATEGORIES } from './match';
import { ITEMS_SHOWN_MAX, RANGE_DAYS_MAX, type Reconciliations } from './reports';
import { CANDIDATES_SCHEMA, MOVEMENTS_SCHEMA, nullableText } from './schemas';
import { STATEMENT_CSV_LINES_MAX } from './statement-csv';

/** A CSV statement of STATEMENT_CSV_LINES_MAX lines fits. */
const UPLOAD_BYTES_MAX = 24 * 1024 * 1024;
const DATE_TOLERANCE_DAYS_MAX = 7;

const ITEM_SCHEMA = {
  type: 'object',
  required: ['category', 'ledger_entry_id', 'statement_line_id', 'reference', 'currency', 'ledger_amount', 'statement_amount', 'field', 'ledger_value', 'statement_value', 'reason'],
  properties: {
    category: {
      type: 'string', enum: ITEM_CATEGORIES,
      description: 'ambiguous: a side without a reference that several others fit (candidates lists them); nothing is matched. batch: a batch line whose listed movements add up to another amount, with all of them (movements)',
    },
    ledger_entry_id: { type: ['string', 'null'], description: 'the journal entry of the movement on the partner\'s settlement account' },
    statement_line_id: { ...nullableText, description: 'the partner statement\'s line' }, reference: { ...nullableText, description: 'the partner\'s payment id' },
    currency: { type: 'string' }, ledger_amount: { ...nullableText, description: 'signed as the partner sees it: + credited to us' },
    statement_amount: { ...nullableText, description: 'the line\'s net (amount − fee)' },
    field: { type: ['string', 'null'], enum: ['currency', 'fee', 'amount', 'value_date', 'reference', null], description: 'the field that disagreed; reference: a duplicate line' },
    ledger_value: nullableText, statement_value: nullableText,
    reason: { type: 'string', description: 'a matched item: how it matched, reference, amount_and_date (a side without a reference) or subset (a batch line without detail), by_hand (a pair finance matched by hand, reported so by every later run); not_examined: the run\'s search budget did not reach it' },
    movements: { ...MOVEMENTS_SCHEMA, type: ['array', 'null'], description: 'an unmatched item\'s ledger side (a batch: every movement it lists); null for a matched item' },
    candidates: { ...CANDIDATES_SCHEMA, type: ['array', 'null'], description: 'an ambiguous item\'s possible other sides; null otherwise' },
  },
};
const COUNT = { type: 'integer', minimum: 0 };
const REPORT_SCHEMA = {
  type: 'object',
  required: ['id', 'status', 'dry_run', 'partner', 'from', 'to', 'trigger', 'source', 'amount_tolerance', 'date_tolerance_days', 'created_at', 'summary', 'not_examined', 'totals', 'exceptions', 'items', 'items_omitted'],
  properties: {
    id: { type: 'string', format: 'uuid' }, status: { type: 'string', enum: ['completed'] }, dry_run: { type: 'boolean', description: 'a dry run is neither stored nor announced' },
    partner: { type: 'string' }, from: { type: 'string' }, to: { type: 'string' }, trigger: { type: 'string', enum: ['api', 'schedule'] },
    source: { type: 'string', enum: ['partner', 'upload'] }, amount_tolerance: { type: 'string' }, date_tolerance_days: { type: 'integer' },
    created_at: { type: 'string', format: 'date-time' },
    summary: { type: 'object', required: ITEM_CATEGORIES, properties: Object.fromEntries(ITEM_CATEGORIES.map((c) => [c, COUNT])) },
    not_examined: { ...COUNT, description: 'statement lines the run\'s search budget did not reach: items with reason not_examined, never matched' },
    totals: {
      type: 'array', description: 'per currency, over the days reported',
      items: {
        type: 'object', required: ['currency', 'ledger', 'statement', 'matched', 'difference'],
        properties: { currency: { type: 'string' }, ledger: { type: 'string' }, statement: { type: 'string' }, matched: { type: 'string' }, difference: { type: 'string', description: 'statement − ledger' } },
      },
    },
    exceptions: {
      type: 'object', required: ['opened', 'resolved'], description: 'GET /v1/reconciliation-exceptions: what this run added to the queue; zero for a dry run',
      properties: {
        opened: { ...COUNT, description: 'unmatched items not reported before, each now an open exception' },
        resolved: { ...COUNT, description: 'open exceptions of earlier reports that this run\'s matching settled (resolution matched); their matched items say which' },
      },
    },
    items: { type: 'array', items: ITEM_SCHEMA, description: `the items that are not matched, at most ${ITEMS_SHOWN_MAX}; the CSV form lists every item` },
    items_omitted: { ...COUNT, description: 'unmatched items beyond those shown' },
  },
};

const RECONCILE_BODY = {
  type: 'object', additionalProperties: false, required: ['partner', 'from', 'to'],
  properties: {
    partner: { type: 'string', enum: [...PARTNER_SLUGS] },
    from: dayOrInstant('the first UTC day, inclusive'), to: dayOrInstant(`the last UTC day, inclusive (from=to is that one day); at most ${RANGE_DAYS_MAX} days`),
    dry_run: { type: 'boolean', default: false, description: 'compute the report without storing or announcing it' },
    amount_tolerance: { type: 'string', pattern: '^\\d{1,12}(\\.\\d{1,6})?$', default: '0', description: 'an amount drift still matched, in the currency\'s units' },
    date_tolerance_days: { type: 'integer', minimum: 0, maximum: DATE_TOLERANCE_DAYS_MAX, default: 1, description: 'a value date this many days from the posting still matches' },
    statement_csv: {
      type: 'string', maxLength: UPLOAD_BYTES_MAX,
      description: `the partner's statement as CSV instead of fetching it: a header row with id, reference, amount, currency, value_date (fee, net optional), at most ${STATEMENT_CSV_LINES_MAX} lines`,
    },
  },
} as const;

/** The Idempotency-Key a reconciliation may carry (optional here: the schedule and older clients send none), checked as every route checks it. */
function optionalIdempotencyKey(header: string): string | null {
  if (header === '') return null;
  if (!/^[!-~]{1,255}$/.test(header)) throw new DomainError('invalid_request', 'Idempotency-Key must be 1 to 255 printable ASCII characters without spaces', 'Idempotency-Key');
  return header;
}

export function reconciliationRoutes(reconciliations: Reconciliations): RouteDef[] {
  return [
    withBody(RECONCILE_BODY, {
      method: 'POST', path: '/v1/reconciliations', operationId: 'createReconciliation', tag: 'finance',
      summary: 'Reconcile the ledger\'s movements on a partner\'s settlement account against its statements (master key)',
      auth: { kind: 'admin' },
      optionalIdempotencyKey: 'optional: makes a retry safe. The same key and body answer the stored report (200, Idempotent-Replayed: true; no second report or events); '
        + 'another body under the key is 409 idempotency_conflict. 1 to 255 printable ASCII characters without spaces',
      bodyLimitBytes: UPLOAD_BYTES_MAX + 4096,
      response: { status: 201, description: 'the stored report', schema: REPORT_SCHEMA },
      extraResponses: [{ status: 200, description: 'a dry run\'s report, not stored; or, for an Idempotency-Key already answered, the stored report (Idempotent-Replayed: true)', schema: REPORT_SCHEMA }],
      errors: ['partner_unavailable', 'partner_error', 'idempotency_conflict'],
      errorNotes: { idempotency_conflict: 'the Idempotency-Key was used for another reconciliation request' },
      handler: async ({ body, koa }) => {
        const idempotencyKey = optionalIdempotencyKey(koa.get('idempotency-key'));
        const { view, replayed } = (await reconciliations.answer({
          partner: body.partner as PartnerSlug, from: utcDayOf(body.from, 'from'), to: utcDayOf(body.to, 'to'), dryRun: body.dry_run ?? false,
          amountTolerance: body.amount_tolerance ?? '0', dateToleranceDays: body.date_tolerance_days ?? 1, statementCsv: body.statement_csv ?? null, trigger: 'api', idempotencyKey,
        }))!;
        if (replayed) return { status: 200, body: view, headers: { 'Idempotent-Replayed': 'true' } };
        return { status: view.dry_run ? 200 : 201, body: view };
      },
    }),
    {
      method: 'GET', path: '/v1/reconciliations', operationId: 'listReconciliations', tag: 'finance',
      summary: 'Stored reconciliation reports, newest first (master key)', auth: { kind: 'admin' },
      query: listQuerySchema({ partner: { type: 'string', enum: [...PARTNER_SLUGS] } }),
      response: { status: 200, description: 'a page of reports, each without its items', schema: listResponseSchema({ ...REPORT_SCHEMA, required: REPORT_SCHEMA.required.filter((f) => f !== 'items' && f !== 'items_omitted') }) },
      handler: async (request) => {
        const { partner, ...page } = request.query as { partner?: string; limit: number; before?: string; offset?: number };
        return { status: 200, body: await reconciliations.list(page, partner) };
      },
    },
    {
      method: 'GET', path: '/v1/reconciliations/{id}', operationId: 'getReconciliation', tag: 'finance',
      summary: 'A stored report: JSON with its unmatched items, or every item as CSV with Accept: text/csv (master key)', auth: { kind: 'admin' },
      params: idParams,
      response: {
        status: 200, description: 'the report', schema: REPORT_SCHEMA,
        alternatives: [{ contentType: 'text/csv', schema: csvText('every item, matched ones included, with a header row: category,ledger_entry_id,statement_line_id,reference,currency,ledger_amount,statement_amount,field,ledger_value,statement_value,reason') }],
      },
      errors: ['reconciliation_not_found'],
      handler: async (request) => {
        const { id } = request.params as { id: string };
        if (!wantsCsv(request.koa)) return { status: 200, body: await reconciliations.get(id) };
        const items = reconciliations.itemsCsv(id);
        const first = await items.next(); // a report that does not exist is a 404, before any CSV is sent
        async function* all() { if (!first.done) yield first.value; yield* items; }
        return { status: 200, body: streamed(all()), headers: { 'Content-Type': 'text/csv; charset=utf-8' } };
      },
    },
  ];
}
