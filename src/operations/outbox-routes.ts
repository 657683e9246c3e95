// The operator's set-aside outbox messages (master key): what the outbox sweeper could never put
// on Kafka as it was, counted by topic, listed newest first, and each replayed after a fix
// (src/outbox/set-aside.ts). Beside /v1/dead-letters, which lists what consumers set aside.
import type { OutboxSetAside, SetAsideRow } from '../outbox/set-aside';
import { listQuerySchema, listResponseSchema } from '../http/pagination';
import type { RouteDef } from '../http/route';
import { idParams } from '../http/validation';

const SET_ASIDE_SCHEMA = {
  type: 'object',
  required: ['id', 'round_id', 'topic', 'key', 'payload', 'headers', 'reason', 'created_at', 'replayed_at'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    round_id: { type: 'string', format: 'uuid', description: 'the ledger round that wrote it; the rest of the round was sent' },
    topic: { type: 'string', description: 'the topic it was for (base name, without the deployment prefix), where a replay sends it' },
    key: { type: 'string', description: 'the message key' },
    payload: { description: 'the message as the ledger wrote it, before encoding' },
    headers: { type: ['object', 'null'], additionalProperties: { type: 'string' } },
    reason: { type: 'string', description: 'why Kafka could not take it (encoding failed, record refused by the broker)' },
    created_at: { type: 'string', format: 'date-time' },
    replayed_at: { type: ['string', 'null'], format: 'date-time' },
  },
};

const view = (row: SetAsideRow) => ({
  id: row.id, round_id: row.round_id, topic: row.topic, key: row.message_key, payload: row.payload, headers: row.headers,
  reason: row.reason, created_at: row.created_at.toISOString(), replayed_at: row.replayed_at?.toISOString() ?? null,
});


export function outboxSetAsideRoutes(setAside: OutboxSetAside): RouteDef[] {
  return [
    {
      method: 'GET', path: '/v1/outbox/set-aside', operationId: 'listOutboxSetAside', tag: 'operations',
      summary: 'Outbox messages Kafka could not take, set aside so later rounds go on, newest first (master key)', auth: { kind: 'admin' },
      query: listQuerySchema({
        topic: { type: 'string', minLength: 1, maxLength: 249, description: 'only those for this topic' },
        replayed: { type: 'boolean', description: 'true: only those replayed; false: only those waiting' },
      }),
      response: { status: 200, description: 'a page of set-aside messages', schema: listResponseSchema(SET_ASIDE_SCHEMA) },
      handler: async (request) => {
        const { topic, replayed, ...page } = request.query as { topic?: string; replayed?: boolean; limit: number; before?: string; offset?: number };
        return { status: 200, body: await setAside.page({ topic, replayed }, page, view) };
      },
    },
    {
      method: 'GET', path: '/v1/outbox/set-aside/summary', operationId: 'countOutboxSetAside', tag: 'operations',
      summary: 'How many set-aside outbox messages wait for an operator, by topic (master key)', auth: { kind: 'admin' },
      response: {
        status: 200, description: 'the counts',
        schema: { type: 'object', required: ['waiting'], properties: { waiting: { type: 'object', additionalProperties: { type: 'integer' }, description: 'by topic' } } },
      },
      handler: async () => ({ status: 200, body: { waiting: await setAside.waiting() } }),
    },
    {
      method: 'GET', path: '/v1/outbox/set-aside/{id}', operationId: 'getOutboxSetAside', tag: 'operations',
      summary: 'One set-aside outbox message (master key)', auth: { kind: 'admin' }, params: idParams,
      response: { status: 200, description: 'the message', schema: SET_ASIDE_SCHEMA },
      handler: async (request) => ({ status: 200, body: view(await setAside.byId((request.params as { id: string }).id)) }),
    },
    {
      method: 'POST', path: '/v1/outbox/set-aside/{id}/replay', operationId: 'replayOutboxSetAside', tag: 'operations',
      summary: 'Encode a set-aside message with the running schemas and send it to its topic (master key); readers take it once by id',
      auth: { kind: 'admin' }, idempotent: true, params: idParams, errors: ['message_unsendable'],
      errorNotes: { message_unsendable: 'Kafka still cannot take the message as it is; it stays waiting' },
      response: { status: 200, description: 'the message, replayed', schema: SET_ASIDE_SCHEMA },
      handler: async (request) => ({ status: 200, body: view(await setAside.replay((request.params as { id: string }).id)) }),
    },
  ];
}
