// Contacts (beneficiaries) of an account: create, list, get, update, delete; their metadata
// (DESIGN.md section 5h) is set on create and changed by PATCH, key by key.
import { metadataPatchSchema, metadataSchema, metadataViewSchema, type Metadata, type MetadataPatch } from '../../ledger/metadata';
import { countryCodeSchema } from '../countries';
import type { Db } from '../db';
import { insertOnce } from '../db/insert-once';
import { DomainError } from '../domain-error';
import { actingAccountId, actingAccountIdForWrite, assertOwnResource } from '../http/acting-account';
import { keysetPage } from '../db/keyset-pages';
import { listQuerySchema, listResponseSchema } from '../http/pagination';
import { withBody, type RouteDef, type RouteRequest } from '../http/route';
import { idParams } from '../http/validation';
import { createdId } from '../idempotency/derived-ids';
import { createdAnswer } from '../idempotency/guard';
import { updateWithMetadata } from './metadata-updates';

interface ContactRow { id: string; account_id: string; name: string; email: string; bank: unknown; note: string | null; metadata: Metadata; created_at: Date; updated_at: Date }

const bankSchema = {
  type: 'object', additionalProperties: false, required: ['country', 'bank_name', 'account_number', 'currency'],
  properties: {
    country: countryCodeSchema, bank_name: { type: 'string', minLength: 1, maxLength: 200 },
    account_number: { type: 'string', minLength: 4, maxLength: 64 }, routing_number: { type: 'string', maxLength: 64 },
    currency: { type: 'string', enum: ['USD', 'EUR', 'GBP'], 'x-error': 'invalid_currency' },
  },
} as const;
const contactProperties = {
  name: { type: 'string', minLength: 1, maxLength: 200 },
  email: { type: 'string', format: 'email', maxLength: 254 },
  bank: bankSchema,
  note: { type: 'string', maxLength: 500 },
} as const;
const contactSchema = {
  type: 'object', required: ['id', 'name', 'email', 'bank', 'note', 'metadata', 'created_at', 'updated_at'],
  properties: {
    id: { type: 'string', format: 'uuid' }, ...contactProperties, bank: { type: ['object', 'null'] }, note: { type: ['string', 'null'] }, metadata: metadataViewSchema,
    created_at: { type: 'string' }, updated_at: { type: 'string' },
  },
};

const view = (row: ContactRow) => ({
  id: row.id, name: row.name, email: row.email, bank: row.bank ?? null, note: row.note, metadata: row.metadata,
  created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString(),
});

export function contactRoutes(db: Db): RouteDef[] {
  const ownContact = async (request: RouteRequest): Promise<ContactRow> => {
    const row: ContactRow | undefined = await db('contacts').where('id', request.params.id).first();
    if (!row) throw new DomainError('resource_not_found', 'no such contact', request.params.id);
    assertOwnResource(request, row.account_id, row.id);
    return row;
  };
  return [
    withBody({
      type: 'object', additionalProperties: false, required: ['name', 'email'],
      properties: { ...contactProperties, metadata: metadataSchema, account_id: { type: 'string', format: 'uuid', description: 'master key only' } },
    }, {
      method: 'POST', path: '/v1/contacts', operationId: 'createContact', tag: 'contacts',
      summary: 'Save a beneficiary', auth: { kind: 'key', scope: 'contacts:write' }, idempotent: true,
      response: { status: 201, description: 'the contact', schema: contactSchema },
      handler: async (request) => {
        const { name, email, bank = null, note = null, metadata = {} } = request.body;
        const accountId = await actingAccountIdForWrite(request, db);
        const made = await insertOnce<ContactRow>(db, 'contacts', {
          id: createdId('contact', request.executionId), account_id: accountId, name, email, bank: bank ? JSON.stringify(bank) : null, note, metadata: JSON.stringify(metadata),
        });
        return createdAnswer(view(made.row), made.created);
      },
    }),
    {
      method: 'GET', path: '/v1/contacts', operationId: 'listContacts', tag: 'contacts',
      summary: 'List beneficiaries, newest first', auth: { kind: 'key', scope: 'contacts:read' },
      query: listQuerySchema({ account_id: { type: 'string', format: 'uuid', description: 'master key only' } }),
      response: { status: 200, description: 'a page of contacts', schema: listResponseSchema(contactSchema) },
      handler: async (request) => {
        const query = db('contacts').where('account_id', actingAccountId(request)).select('*');
        return { status: 200, body: await keysetPage(query, 'contacts', request.query, view) };
      },
    },
    {
      method: 'GET', path: '/v1/contacts/{id}', operationId: 'getContact', tag: 'contacts',
      summary: 'Retrieve a beneficiary', auth: { kind: 'key', scope: 'contacts:read' }, params: idParams,
      response: { status: 200, description: 'the contact', schema: contactSchema },
      handler: async (request) => ({ status: 200, body: view(await ownContact(request)) }),
    },
    withBody({ type: 'object', additionalProperties: false, minProperties: 1, properties: { ...contactProperties, metadata: metadataPatchSchema } }, {
      method: 'PATCH', path: '/v1/contacts/{id}', operationId: 'updateContact', tag: 'contacts',
      summary: 'Change fields of a beneficiary; metadata key by key (null removes a key, the others are kept)', auth: { kind: 'key', scope: 'contacts:write' }, idempotent: true, params: idParams,
      response: { status: 200, description: 'the contact', schema: contactSchema },
      errorNotes: { invalid_request: 'among others: details names the metadata key at fault (metadata.crm_id), also the first key past 50 after the change; nothing changes' },
      handler: async (request) => {
        await ownContact(request);
        const { metadata, ...fields } = request.body;
        const changes: Record<string, unknown> = { ...fields, updated_at: db.fn.now() };
        if (fields.bank) changes.bank = JSON.stringify(fields.bank);
        return { status: 200, body: view(await updateWithMetadata<ContactRow>(db, 'contacts', request.params.id, metadata as MetadataPatch | undefined, changes)) };
      },
    }),
    {
      method: 'DELETE', path: '/v1/contacts/{id}', operationId: 'deleteContact', tag: 'contacts',
      summary: 'Delete a beneficiary', auth: { kind: 'key', scope: 'contacts:write' }, idempotent: true, params: idParams,
      response: { status: 200, description: 'deleted', schema: { type: 'object', required: ['id', 'deleted'], properties: { id: { type: 'string' }, deleted: { type: 'boolean' } } } },
      handler: async (request) => {
        await ownContact(request);
        await db('contacts').where('id', request.params.id).delete();
        return { status: 200, body: { id: request.params.id, deleted: true } };
      },
    },
  ];
}
