// The customer a request names, when the caller may act for it: shared by the routes that take a
// customer (customers, partner links, payments).
import { assertOwnResource } from '../http/acting-account';
import type { Db } from '../db';
import { DomainError } from '../domain-error';
import type { RouteRequest } from '../http/route';

/**
 * A customer the caller may act for; the errors name `detail` (the path's id, or the body field
 * that named the customer). @throws DomainError resource_not_found, cross_account_access_denied
 */
export async function ownCustomer(db: Db, request: RouteRequest, customerId: string, detail: string = customerId): Promise<{ id: string; account_id: string }> {
  const customer = await db('customers').where('id', customerId).first('id', 'account_id');
  if (!customer) throw new DomainError('resource_not_found', 'no such customer', detail);
  assertOwnResource(request, customer.account_id, detail);
  return customer;
}
