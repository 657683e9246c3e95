// The body of the matching worker thread (search-thread.ts): one job in, its answer out.
import { parentPort, workerData } from 'node:worker_threads';
import { runJob, type SearchJob } from './search-thread';

parentPort!.postMessage(runJob(workerData as SearchJob));
