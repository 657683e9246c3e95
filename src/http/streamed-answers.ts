// Answers streamed as they are read (statements, the journal, reconciliation reports), in JSON or
// CSV as the Accept header asks.
import type Koa from 'koa';
import { Readable } from 'node:stream';
import type { JsonSchema } from './route';

/**
 * A response body read from `chunks` as the client takes it: in byte mode, so at most one chunk
 * waits in the stream's buffer besides the one on the socket.
 */
export function streamed(chunks: AsyncIterable<string>): Readable {
  return Readable.from(chunks, { objectMode: false, highWaterMark: 64 * 1024 });
}

/** Whether the client asked for CSV over JSON. */
export function wantsCsv(ctx: Koa.Context, json = 'application/json'): boolean {
  return ctx.accepts(json, 'text/csv') === 'text/csv';
}

export const csvText = (description: string): JsonSchema => ({ type: 'string', description });
