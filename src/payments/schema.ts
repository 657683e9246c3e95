// The Payment of SPEC.md section 2 as the API documents it, every field present.
import { metadataViewSchema } from '../../ledger/metadata';
import { PAYMENT_STATUSES } from '../../ledger/payments';

export const nullable = (type: string) => ({ type: [type, 'null'] });
export const paymentSchema = {
  type: 'object',
  required: ['id', 'partner', 'direction', 'kind', 'amount', 'currency', 'status', 'external_id', 'claim_link', 'idempotency_key', 'retry_count',
    'customer_id', 'source_funding_method_external_id', 'purpose', 'payee', 'metadata', 'failure', 'created_at', 'completed_at'],
  properties: {
    id: { type: 'string', format: 'uuid' }, partner: { type: 'string' }, direction: { type: 'string', enum: ['inbound', 'outbound'] },
    kind: { type: 'string', enum: ['add_funds', 'claimless', 'send'] }, amount: { type: 'string' }, currency: { type: 'string' },
    status: { type: 'string', enum: [...PAYMENT_STATUSES] }, external_id: nullable('string'), claim_link: nullable('string'),
    idempotency_key: { type: 'string' }, retry_count: { type: 'integer' }, customer_id: { type: 'string', format: 'uuid' },
    source_funding_method_external_id: nullable('string'), purpose: nullable('string'),
    payee: { type: ['object', 'null'], description: 'who an outbound payment pays, as the request gave it' }, metadata: metadataViewSchema,
    failure: { type: ['object', 'null'], required: ['code', 'message'], properties: { code: { type: 'string' }, message: nullable('string') } },
    created_at: { type: 'string', format: 'date-time' }, completed_at: { type: ['string', 'null'], format: 'date-time' },
  },
};

