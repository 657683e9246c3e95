// An API key as the API answers it: without its secret, and (once, when made) with it.
import { KEY_TYPES } from '../auth/credentials';

export const keySchema = {
  type: 'object', required: ['id', 'type', 'name', 'key_hint', 'scopes', 'environment', 'created_at', 'revoked_at'],
  properties: {
    id: { type: 'string', format: 'uuid' }, type: { type: 'string', enum: [...KEY_TYPES] }, name: { type: ['string', 'null'] },
    key_hint: { type: 'string' }, scopes: { type: 'array', items: { type: 'string' } }, environment: { type: 'string' },
    created_at: { type: 'string' }, revoked_at: { type: ['string', 'null'] },
  },
};

/** A key as created: the full secret `key` appears here, once, and never again. */
export const apiKeyWithSecretSchema = {
  ...keySchema, required: [...keySchema.required, 'key'],
  properties: { ...keySchema.properties, key: { type: 'string', description: 'the full key; shown only in this response (a replay of its Idempotency-Key answers "[redacted]", header Secret-Redacted: true)' } },
};
