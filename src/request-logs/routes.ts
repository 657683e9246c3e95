// Request logs (SPEC.md section 4 "Request logs"): the full request and response of a logged
// request, by its Request-Id, scoped to the caller's account (the master key sees all).
import { DomainError } from '../domain-error';
import { assertOwnResource } from '../http/acting-account';
import type { LogRow, RequestLogReads } from './reads';
import { listQuerySchema, listResponseSchema } from '../http/pagination';
import type { RouteDef } from '../http/route';
import { idParams } from '../http/validation';


const logSchema = {
  type: 'object',
  required: ['id', 'account_id', 'method', 'path', 'query', 'status', 'duration_ms', 'credential_id', 'idempotency_key', 'request_body', 'response_body', 'error_code', 'created_at', 'truncated'],
  properties: {
    id: { type: 'string', format: 'uuid' }, account_id: { type: ['string', 'null'], format: 'uuid' }, method: { type: 'string' }, path: { type: 'string' }, query: { type: 'string' },
    status: { type: 'integer' }, duration_ms: { type: 'string' }, credential_id: { type: ['string', 'null'] },
    idempotency_key: { type: ['string', 'null'] }, request_body: {}, response_body: {}, error_code: { type: ['string', 'null'] },
    created_at: { type: 'string', format: 'date-time' },
    truncated: { type: 'boolean', description: 'a body was cut to 100,000 characters (kept as a JSON string of its start) or had characters Postgres cannot store replaced by U+FFFD' },
  },
};

const view = (row: LogRow) => ({
  id: row.id, account_id: row.account_id, credential_id: row.credential_id, method: row.method, path: row.path,
  query: row.query, status: row.status, duration_ms: (row.duration_us / 1000).toFixed(3), idempotency_key: row.idempotency_key,
  request_body: row.request_body, response_body: row.response_body, error_code: row.error_code, created_at: row.created_at.toISOString(),
  truncated: row.truncated,
});

export function requestLogRoutes(reads: RequestLogReads): RouteDef[] {
  return [
    {
      method: 'GET', path: '/v1/request-logs/{id}', operationId: 'getRequestLog', tag: 'request-logs',
      summary: 'One logged request with its request and response body (id = the Request-Id header)',
      auth: { kind: 'key', scope: 'request_logs:read' },
      params: idParams,
      response: { status: 200, description: 'the log', schema: logSchema },
      handler: async (request) => {
        const row = await reads.byId(request.params.id);
        if (!row) throw new DomainError('resource_not_found', 'no such request log (logs appear within a second of the request)', request.params.id);
        if (row.account_id === null && !request.principal!.isAdmin) throw new DomainError('resource_not_found', 'no such request log', request.params.id);
        assertOwnResource(request, row.account_id ?? '', row.id);
        return { status: 200, body: view(row) };
      },
    },
    {
      method: 'GET', path: '/v1/request-logs', operationId: 'listRequestLogs', tag: 'request-logs',
      summary: 'Logged requests of the account, newest first', auth: { kind: 'key', scope: 'request_logs:read' },
      query: listQuerySchema({
        status: { type: 'string', pattern: '^([1-5]xx|[1-5][0-9]{2})$', description: 'a status class (2xx, 4xx, 5xx, ...) or one status code (404)' },
        path_prefix: { type: 'string', pattern: '^/', minLength: 1, maxLength: 2048, description: 'only requests whose path starts with this (e.g. /v1/transfers)' },
        since: { type: 'string', format: 'date-time', description: 'only requests made at or after this instant (ISO 8601)' },
      }),
      response: { status: 200, description: 'a page of logs', schema: listResponseSchema(logSchema) },
      handler: async (request) => {
        const principal = request.principal!;
        const { status, path_prefix: pathPrefix, since } = request.query;
        const filter = { status, pathPrefix, since: since === undefined ? undefined : new Date(since) };
        return { status: 200, body: await reads.page(principal.isAdmin ? null : principal.accountId, filter, request.query, view) };
      },
    },
  ];
}
