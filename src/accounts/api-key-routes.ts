// API-key management (DESIGN.md section 5): session or master credential; the full key is
// returned once, at creation.
import { DomainError } from '../domain-error';
import { accountIdQuerySchema, actingAccountId } from '../http/acting-account';
import { listQuerySchema, listResponseSchema } from '../http/pagination';
import { withBody, type RouteDef } from '../http/route';
import { idParams } from '../http/validation';
import { createdId } from '../idempotency/derived-ids';
import { createdAnswer } from '../idempotency/guard';
import { apiKeyWithSecretSchema, keySchema } from './api-key-schemas';
import { KEY_TYPES } from '../auth/credentials';
import { SCOPES } from '../auth/scopes';
import type { AccountService } from './service';

export function apiKeyRoutes(accounts: AccountService): RouteDef[] {
  return [
    withBody({
      type: 'object', additionalProperties: false, required: ['type'],
      properties: {
        type: { type: 'string', enum: [...KEY_TYPES], 'x-error': 'invalid_key_type' },
        scopes: { type: 'array', uniqueItems: true, items: { type: 'string', enum: [...SCOPES] }, description: 'restricted keys only' },
        name: { type: 'string', maxLength: 100 },
        account_id: { type: 'string', format: 'uuid', description: 'master key only' },
      },
    }, {
      method: 'POST', path: '/v1/api-keys', operationId: 'createApiKey', tag: 'api-keys',
      summary: 'Create an API key (the key is shown once)', auth: { kind: 'dashboard' }, idempotent: true, secretFields: ['key'],
      response: { status: 201, description: 'the key, with its secret', schema: apiKeyWithSecretSchema },
      errors: ['invalid_key_type'],
      handler: async (request) => {
        const { type, scopes = [], name = null } = request.body;
        if (type !== 'restricted' && scopes.length > 0) throw new DomainError('invalid_request', 'only restricted keys carry scopes', 'scopes');
        if (type === 'restricted' && scopes.length === 0) throw new DomainError('invalid_request', 'a restricted key needs at least one scope', 'scopes');
        const accountId = actingAccountId(request);
        if (request.principal!.isAdmin) await accounts.getAccount(accountId); // 404 for an account that does not exist
        const made = await accounts.createApiKey(createdId('api-key', request.executionId), accountId, type, scopes, name);
        return createdAnswer(made.key, made.created);
      },
    }),
    {
      method: 'GET', path: '/v1/api-keys', operationId: 'listApiKeys', tag: 'api-keys',
      summary: 'List the API keys of the account (never the secret)', auth: { kind: 'dashboard' },
      query: listQuerySchema({ account_id: accountIdQuerySchema }),
      response: { status: 200, description: 'a page of keys', schema: listResponseSchema(keySchema) },
      handler: async (request) => ({ status: 200, body: await accounts.listApiKeys(actingAccountId(request), request.query) }),
    },
    {
      method: 'DELETE', path: '/v1/api-keys/{id}', operationId: 'revokeApiKey', tag: 'api-keys',
      summary: 'Revoke an API key; no server accepts it once this answers', auth: { kind: 'dashboard' }, idempotent: true,
      params: idParams,
      response: { status: 200, description: 'the revoked key; from this answer on, no server accepts it', schema: keySchema },
      errorNotes: { service_unavailable: `the revocation could not be made to hold in every server (details "redis"): nothing changed, the key still works; repeat the request after Retry-After seconds with the same Idempotency-Key` },
      handler: async (request) => ({ status: 200, body: await accounts.revokeApiKey(request.principal!.isAdmin ? null : request.principal!.accountId, request.params.id) }),
    },
  ];
}
