// The body of the matching worker thread (search-thread.ts): one job in, its answer out.
import { parentPort, workerData } from 'node:worker_threads';
import { runTextJob, type SearchTextJob } from './search-thread';

parentPort!.postMessage(runTextJob(workerData as SearchTextJob));
