// Customers (SPEC.md section 2 "Customer"): creation is idempotent on email within the account;
// their metadata (DESIGN.md section 5h) is set on create and changed with PATCH.
import { randomUUID } from 'node:crypto';
import { canonicalEmail } from '../../ledger/emails';
import { metadataPatchSchema, metadataSchema, metadataViewSchema, type Metadata, type MetadataPatch } from '../../ledger/metadata';
import { actingAccountId, actingAccountIdForWrite, assertOwnResource } from '../http/acting-account';
import { countryCodeSchema } from '../countries';
import type { Db } from '../db';
import { keysetPage } from '../db/keyset-pages';
import { DomainError } from '../domain-error';
import { listQuerySchema, listResponseSchema } from '../http/pagination';
import { withBody, type RouteDef, type RouteRequest } from '../http/route';
import { idParams } from '../http/validation';
import { updateWithMetadata } from './metadata-updates';

interface CustomerRow { id: string; account_id: string; email: string; business_name: string; country_code: string; metadata: Metadata; created_at: Date }

const customerSchema = {
  type: 'object', required: ['id', 'email', 'business_name', 'country_code', 'account_id', 'metadata', 'created_at'],
  properties: {
    id: { type: 'string', format: 'uuid' }, email: { type: 'string' }, business_name: { type: 'string' },
    country_code: { type: 'string' }, account_id: { type: 'string', format: 'uuid' }, metadata: metadataViewSchema, created_at: { type: 'string', format: 'date-time' },
  },
};

const view = (row: CustomerRow) => ({
  id: row.id, account_id: row.account_id, email: row.email, business_name: row.business_name,
  country_code: row.country_code, metadata: row.metadata, created_at: row.created_at.toISOString(),
});

const updateBody = {
  type: 'object', additionalProperties: false, required: ['metadata'],
  examples: [{ metadata: { crm_id: 'C-204', segment: null } }],
  properties: { metadata: metadataPatchSchema },
} as const;

export function customerRoutes(db: Db): RouteDef[] {
  const ownCustomer = async (request: RouteRequest): Promise<CustomerRow> => {
    const row: CustomerRow | undefined = await db('customers').where('id', request.params.id).first();
    if (!row) throw new DomainError('resource_not_found', 'no such customer', request.params.id);
    assertOwnResource(request, row.account_id, row.id);
    return row;
  };
  return [
    withBody({
      type: 'object', additionalProperties: false, required: ['email', 'business_name', 'country_code'],
      properties: {
        email: { type: 'string', format: 'email', maxLength: 254 }, business_name: { type: 'string', minLength: 1, maxLength: 200 }, country_code: countryCodeSchema,
        metadata: { ...metadataSchema, description: `${metadataSchema.description}; an existing customer's (the same email) is left as it is: change it with PATCH` },
        account_id: { type: 'string', format: 'uuid', description: 'master key only' },
      },
    }, {
      method: 'POST', path: '/v1/customers', operationId: 'createCustomer', tag: 'customers',
      summary: 'Create a customer; the same email returns the existing customer', auth: { kind: 'key', scope: 'customers:write' }, idempotent: true,
      response: { status: 201, description: 'the new customer', schema: customerSchema },
      // SPEC.md section 2: creation is idempotent on email.
      extraResponses: [{ status: 200, description: 'the existing customer with this email (creation is idempotent on email), or a replay of the same Idempotency-Key', schema: customerSchema }],
      handler: async (request) => {
        const accountId = await actingAccountIdForWrite(request, db);
        const { email, business_name, country_code, metadata = {} } = request.body;
        const inserted = await db.raw(
          `INSERT INTO customers (id, account_id, email, business_name, country_code, metadata) VALUES (?, ?, ?, ?, ?, ?)
           ON CONFLICT (account_id, lower(email)) DO NOTHING RETURNING *`,
          [randomUUID(), accountId, email, business_name, country_code, JSON.stringify(metadata)],
        );
        if (inserted.rowCount === 1) return { status: 201, body: view(inserted.rows[0]) };
        const existing: CustomerRow = await db('customers').where('account_id', accountId).whereRaw('lower(email) = ?', [canonicalEmail(email)]).first();
        return { status: 200, body: view(existing) };
      },
    }),
    {
      method: 'GET', path: '/v1/customers/{id}', operationId: 'getCustomer', tag: 'customers',
      summary: 'Retrieve a customer', auth: { kind: 'key', scope: 'customers:read' },
      params: idParams,
      response: { status: 200, description: 'the customer', schema: customerSchema },
      handler: async (request) => ({ status: 200, body: view(await ownCustomer(request)) }),
    },
    withBody(updateBody, {
      method: 'PATCH', path: '/v1/customers/{id}', operationId: 'updateCustomer', tag: 'customers',
      summary: 'Change a customer\'s metadata: a key set to a string is set, a key set to null removed, the others kept',
      auth: { kind: 'key', scope: 'customers:write' }, idempotent: true, params: idParams,
      response: { status: 200, description: 'the customer', schema: customerSchema },
      errorNotes: { invalid_request: 'among others: details names the metadata key at fault (metadata.crm_id), also the first key past 50 after the change; nothing changes' },
      handler: async (request) => {
        const customer = await ownCustomer(request);
        return { status: 200, body: view(await updateWithMetadata<CustomerRow>(db, 'customers', customer.id, request.body.metadata as MetadataPatch, {})) };
      },
    }),
    {
      method: 'GET', path: '/v1/customers', operationId: 'listCustomers', tag: 'customers',
      summary: 'List customers, newest first', auth: { kind: 'key', scope: 'customers:read' },
      query: listQuerySchema({ account_id: { type: 'string', format: 'uuid', description: 'master key only' } }),
      response: { status: 200, description: 'a page of customers', schema: listResponseSchema(customerSchema) },
      handler: async (request) => {
        const query = db('customers').where('account_id', actingAccountId(request)).select('*');
        return { status: 200, body: await keysetPage(query, 'customers', request.query, view) };
      },
    },
  ];
}
