// Worker threads that take Kafka work off the main thread (the request-log shipper, the ledger's
// outbox publisher). A thread says { kind: 'ready' } once it can work, or { kind: 'failed' }.
import { Worker } from 'node:worker_threads';

/** Starts `file` as a worker thread with `workerData`; resolves once it reports ready. */
export async function startWorker(file: string, workerData: unknown): Promise<Worker> {
  const worker = new Worker(file, { workerData });
  await new Promise<void>((resolve, reject) => {
    const onMessage = (message: { kind: string; reason?: string }) => {
      if (message.kind === 'ready') resolve();
      else if (message.kind === 'failed') reject(new Error(`${file} could not start: ${message.reason}`));
      else return;
      worker.off('message', onMessage);
      worker.off('error', reject);
    };
    worker.on('message', onMessage);
    worker.on('error', reject);
  });
  return worker;
}
