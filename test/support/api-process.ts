// An API process of its own (ROLES=api,notifier), in the suite's namespace: the worker's service
// runs the ledger and the other roles that decide what it sends.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { eventually } from './http';

const MAIN = path.join(__dirname, '..', '..', 'src', 'main.js');

export interface ApiProcess { child: ChildProcess; url: string }

/** Starts it on `port` (0: a free one) and waits until it listens. */
export async function startApi(port = '0'): Promise<ApiProcess> {
  const child = spawn(process.execPath, [MAIN], {
    env: { ...process.env, ROLES: 'api,notifier', PORT: port, LOG_LEVEL: 'info', RATE_LIMIT_RPS: '1000', RATE_LIMIT_BURST: '1000' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  child.stderr!.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  const url = await eventually(async () => /"url":"(http:\/\/[^"]+)","msg":"api listening"/.exec(output)?.[1], 60_000, 'the API process to listen')
    .catch((error: Error) => { child.kill('SIGKILL'); throw new Error(`${error.message}: ${output.slice(-2000)}`); });
  return { child, url };
}

export async function stopApi(api: ApiProcess): Promise<void> {
  if (api.child.exitCode !== null) return;
  const exited = new Promise((resolve) => api.child.once('exit', resolve));
  api.child.kill('SIGTERM');
  await exited;
}
