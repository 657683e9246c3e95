// A process says it is ready (GET /readyz) only once its first requests cost what later ones do.
// Started cold, the first requests opened Postgres connections one by one (each a SCRAM
// handshake), fetched Kafka metadata on their first send, loaded the rate limiter's script into
// Redis, and ran code not yet compiled; under a load that began as /readyz turned ready, the p99
// of the first seconds was many times the warmed one. Warming does that work before the load.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';
import type { Producer } from 'kafkajs';
import type { Db } from './db';
import type { TopicNames } from './kafka/topics';
import { log } from './log';

/** Connections opened ahead in a process's Postgres pool; they stay (the pool's minimum). */
export const WARM_CONNECTIONS = 4;
/** Past this, a process says it is ready anyway: a dependency that is away shows in its own check. */
const WARM_UP_MS_MAX = 15_000;

const warming = new Set<string>();

/** What is still warming up in this process (named by role), for the readiness check. */
export function stillWarming(): string[] {
  return [...warming];
}

/** Runs `steps` for `role`, bounded, while the readiness check reports it warming. */
export async function warmUp(role: string, steps: Array<() => Promise<unknown>>): Promise<void> {
  warming.add(role);
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      Promise.all(steps.map((step) => step())),
      new Promise((resolve) => { timer = setTimeout(resolve, WARM_UP_MS_MAX); }),
    ]);
    log.info({ role, ms: Math.round(performance.now() - started) }, 'warmed up');
  } catch (error) {
    log.warn({ err: error, role }, 'warming up failed; the first requests may be slower');
  } finally {
    clearTimeout(timer);
    warming.delete(role);
  }
}

/** Opens the pool's connections ahead, all at once, and hands them back. */
export async function fillPool(db: Db, connections = WARM_CONNECTIONS): Promise<void> {
  const acquired = await Promise.all(Array.from({ length: connections }, () => db.client.acquireConnection()));
  await Promise.all(acquired.map((connection) => db.client.releaseConnection(connection)));
}

/** Fetches the producer's metadata of the topics a role sends to, as its first send would. */
export async function knowTopics({ producer, names }: { producer: Producer; names: TopicNames }, topics: string[]): Promise<void> {
  await producer.sendBatch({ acks: -1, topicMessages: topics.map((topic) => ({ topic: names.full(topic), messages: [] })) });
}

/** A request the warm-up sends: method, path, headers and a JSON body. */
export interface WarmUpRequest { method: string; path: string; headers?: Record<string, string>; body?: unknown }

/**
 * Serves `app` on a loopback port of its own, for the warm-up alone, and sends it each request
 * `rounds` times, a few at a time, so the code of those request paths is compiled before the load.
 */
export async function exercise(app: Koa, requests: WarmUpRequest[], rounds: number, concurrency = 8): Promise<void> {
  const server: Server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve, reject) => { server.once('listening', resolve); server.once('error', reject); });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    let left = rounds * requests.length;
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (left-- > 0) {
        const { method, path, headers, body } = requests[left % requests.length];
        const response = await fetch(`${base}${path}`, { method, headers: { 'content-type': 'application/json', ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
        await response.arrayBuffer();
      }
    }));
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
