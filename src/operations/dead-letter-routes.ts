// The operator's dead letters (master key): the messages a consumer set aside, counted by topic,
// listed newest first, and each replayed after a fix (src/kafka/dead-letters.ts).
import type { DeadLetterRow, DeadLetters } from '../kafka/dead-letters';
import { listQuerySchema, listResponseSchema } from '../http/pagination';
import type { RouteDef } from '../http/route';
import { idParams } from '../http/validation';

const DEAD_LETTER_SCHEMA = {
  type: 'object',
  required: ['id', 'consumer_group', 'topic', 'partition', 'offset', 'key', 'value_base64', 'reason', 'created_at', 'replayed_at'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    consumer_group: { type: 'string' },
    topic: { type: 'string', description: 'the topic the message came from, where a replay sends it' },
    partition: { type: 'integer' },
    offset: { type: 'string' },
    key: { type: ['string', 'null'], description: 'the message key as UTF-8 text' },
    value_base64: { type: ['string', 'null'], description: 'the message bytes as they arrived' },
    reason: { type: 'string', description: 'why it was set aside' },
    created_at: { type: 'string', format: 'date-time' },
    replayed_at: { type: ['string', 'null'], format: 'date-time' },
  },
};

const view = (row: DeadLetterRow) => ({
  id: row.id, consumer_group: row.consumer_group, topic: row.source_topic, partition: row.source_partition, offset: String(row.source_offset),
  key: row.message_key?.toString('utf8') ?? null, value_base64: row.message_value?.toString('base64') ?? null, reason: row.reason,
  created_at: row.created_at.toISOString(), replayed_at: row.replayed_at?.toISOString() ?? null,
});


export function deadLetterRoutes(letters: DeadLetters): RouteDef[] {
  return [
    {
      method: 'GET', path: '/v1/dead-letters', operationId: 'listDeadLetters', tag: 'operations',
      summary: 'Messages a consumer set aside, newest first (master key)', auth: { kind: 'admin' },
      query: listQuerySchema({
        topic: { type: 'string', minLength: 1, maxLength: 249, description: 'only those from this topic' },
        replayed: { type: 'boolean', description: 'true: only those replayed; false: only those waiting' },
      }),
      response: { status: 200, description: 'a page of dead letters', schema: listResponseSchema(DEAD_LETTER_SCHEMA) },
      handler: async (request) => {
        const { topic, replayed, ...page } = request.query as { topic?: string; replayed?: boolean; limit: number; before?: string; offset?: number };
        return { status: 200, body: await letters.page({ topic, replayed }, page, view) };
      },
    },
    {
      method: 'GET', path: '/v1/dead-letters/summary', operationId: 'countDeadLetters', tag: 'operations',
      summary: 'How many dead letters wait for an operator, by topic (master key)', auth: { kind: 'admin' },
      response: {
        status: 200, description: 'the counts',
        schema: { type: 'object', required: ['waiting'], properties: { waiting: { type: 'object', additionalProperties: { type: 'integer' }, description: 'by source topic' } } },
      },
      handler: async () => ({ status: 200, body: { waiting: await letters.waiting() } }),
    },
    {
      method: 'GET', path: '/v1/dead-letters/{id}', operationId: 'getDeadLetter', tag: 'operations',
      summary: 'One dead letter (master key)', auth: { kind: 'admin' }, params: idParams,
      response: { status: 200, description: 'the dead letter', schema: DEAD_LETTER_SCHEMA },
      handler: async (request) => ({ status: 200, body: view(await letters.byId((request.params as { id: string }).id)) }),
    },
    {
      method: 'POST', path: '/v1/dead-letters/{id}/replay', operationId: 'replayDeadLetter', tag: 'operations',
      summary: 'Send a dead letter again, as it was, to its topic (master key); consumers are idempotent', auth: { kind: 'admin' },
      idempotent: true, params: idParams,
      response: { status: 200, description: 'the dead letter, replayed', schema: DEAD_LETTER_SCHEMA },
      handler: async (request) => ({ status: 200, body: view(await letters.replay((request.params as { id: string }).id)) }),
    },
  ];
}
