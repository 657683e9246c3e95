// Which account a request acts for, and whether it may touch a given resource.
import { DomainError } from '../errors';
import type { RouteRequest } from './route';

export const accountIdQuerySchema = { type: 'string', format: 'uuid', description: 'master key only: the account to act for' };

/** The caller's own account; the master key names one with `account_id`. */
export function actingAccountId(request: RouteRequest): string {
  const principal = request.principal!;
  if (principal.accountId) return principal.accountId;
  const named = (request.query?.account_id ?? request.body?.account_id) as string | undefined;
  if (!named) throw new DomainError('invalid_request', 'the master key must name the account it acts for with account_id', 'account_id');
  return named;
}

/** @throws DomainError cross_account_access_denied when a non-admin caller reaches another account's resource */
export function assertOwnResource(request: RouteRequest, ownerAccountId: string, resourceId: string): void {
  const principal = request.principal!;
  if (!principal.isAdmin && principal.accountId !== ownerAccountId) {
    throw new DomainError('cross_account_access_denied', 'this resource belongs to another account', resourceId);
  }
}
