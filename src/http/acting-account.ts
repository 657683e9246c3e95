// Which account a request acts for, and whether it may touch a given resource.
import type { Db } from '../db';
import { DomainError } from '../domain-error';
import type { RouteRequest } from './route';

export const accountIdQuerySchema = { type: 'string', format: 'uuid', description: 'master key only: the account to act for' } as const;

/**
 * The caller's own account; the master key names one with `account_id`. A regular credential
 * naming another account is refused rather than silently acting for its own (SPEC.md section 5).
 * @throws DomainError invalid_request | cross_account_access_denied
 */
/** The account a request names (`account_id` in its query or body), if any. */
export function namedAccountId(request: RouteRequest): string | undefined {
  const fromBody = (request.body as { account_id?: unknown } | undefined)?.account_id;
  const named = request.query?.account_id ?? fromBody;
  return typeof named === 'string' ? named : undefined;
}

export function actingAccountId(request: RouteRequest): string {
  const principal = request.principal!;
  const named = namedAccountId(request);
  if (principal.accountId) {
    if (named !== undefined && named !== principal.accountId) {
      throw new DomainError('cross_account_access_denied', 'account_id names another account; only the master key acts for other accounts', 'account_id');
    }
    return principal.accountId;
  }
  if (!named) throw new DomainError('invalid_request', 'the master key must name the account it acts for with account_id', 'account_id');
  return named;
}

/**
 * As actingAccountId, for writes: an account the master key names must exist (a regular
 * credential's account always does), so a typo is a 404 rather than a foreign-key failure.
 * @throws DomainError invalid_request | cross_account_access_denied | resource_not_found
 */
export async function actingAccountIdForWrite(request: RouteRequest, db: Db): Promise<string> {
  const accountId = actingAccountId(request);
  if (request.principal!.accountId) return accountId;
  const account: { id: string } | undefined = await db('accounts').where('id', accountId).first('id');
  if (!account) throw new DomainError('resource_not_found', 'account_id names no account', 'account_id');
  return accountId;
}

/** @throws DomainError cross_account_access_denied when a non-admin caller reaches another account's resource */
export function assertOwnResource(request: RouteRequest, ownerAccountId: string, resourceId: string): void {
  const principal = request.principal!;
  if (!principal.isAdmin && principal.accountId !== ownerAccountId) {
    throw new DomainError('cross_account_access_denied', 'this resource belongs to another account', resourceId);
  }
  // The master key acting for a named account touches that account's resources only: a payment
  // for one account may not draw on another's customer.
  const named = principal.isAdmin ? namedAccountId(request) : undefined;
  if (named !== undefined && named !== ownerAccountId) {
    throw new DomainError('cross_account_access_denied', 'this resource belongs to another account than account_id', resourceId);
  }
}
