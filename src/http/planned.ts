// Routes SPEC.md section 4 lists as "planned and unavailable": they answer the error body with
// a message saying so, rather than a bare "no route". 404 resource_not_found is the SPEC code for
// "resource missing or not accessible"; no SPEC code says "not implemented", and a client that
// branches on the code treats the planned resource as absent, which it is.
import { DomainError } from '../errors';
import { ERROR_BODY_SCHEMA } from './openapi';
import type { HttpMethod, RouteDef } from './route';

const PLANNED: Array<[HttpMethod, string, string]> = [
  ['GET', '/v1/wallets', 'listWallets'],
  ['GET', '/v1/wallets/{wallet_id}/balances', 'getWalletBalances'],
  ['GET', '/v1/wallets/{wallet_id}/ledger-entries', 'listWalletLedgerEntries'],
  ['POST', '/v1/wallet-transfers', 'createWalletTransfer'],
];

export function plannedRoutes(): RouteDef[] {
  return PLANNED.map(([method, path, operationId]) => ({
    method, path, operationId, tag: 'planned',
    summary: `Planned and not yet available (SPEC.md section 4); answers 404 resource_not_found`,
    auth: { kind: 'public' },
    params: path.includes('{wallet_id}') ? { type: 'object', properties: { wallet_id: { type: 'string' } } } : undefined,
    response: { status: 404, description: 'the route is planned and not yet available', schema: ERROR_BODY_SCHEMA },
    errors: ['resource_not_found'],
    handler: async () => {
      throw new DomainError('resource_not_found', `${method} ${path} is planned and not yet available; to move funds to a recipient, use POST /v1/transfers`, path);
    },
  }));
}
