// Runs the request-log writer as a consumer group member.
import { startConsumer } from '../../src/kafka/consumer';
import { TOPICS } from '../../src/kafka/topics';
import type { RequestLogRecord } from '../../src/request-logs/messages';
import type { RunningRole, Runtime } from '../../src/runtime';
import { writeRequestLogs } from './writer';

export async function startRequestLogWriter(runtime: Runtime): Promise<RunningRole> {
  const consumer = await startConsumer<RequestLogRecord>(runtime, {
    groupId: `${runtime.names.prefix}request-logs`,
    topic: TOPICS.requestLogs,
    handleBatch: (messages) => writeRequestLogs(runtime.db, messages),
    // Larger fetches, fewer inserts: under load a fetch waits for 64 KiB, and a log waits at
    // most 200 ms for company before it is written.
    fetchMinBytes: 64 * 1024,
    fetchMaxWaitMs: 200,
  });
  return { role: 'request-logs', stop: () => consumer.disconnect() };
}
