// What the chaos suite kills and brings back: the stack's servers (SIGKILL by the pid the stack
// script recorded, back with `scripts/stack.sh up`) and the service's role processes (SIGKILL,
// back with the same `node dist/src/main.js` command).
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { sleep, startService, stopService, waitReady, type BenchService } from '../bench/harness';

const run = promisify(execFile);
const ROOT = path.join(__dirname, '..', '..', '..');
const RUN_DIR = path.join(process.env.STACK_DIR ?? path.join(ROOT, '.stack'), 'run');

/** The pid of a stack server: from the stack script's pid file, or Postgres's own. */
function serverPid(server: 'kafka' | 'redis' | 'postgres'): number {
  if (server === 'postgres') {
    const dataDir = fs.readdirSync('/var/lib/postgresql').map((version) => `/var/lib/postgresql/${version}/main/postmaster.pid`).find((f) => fs.existsSync(f));
    if (!dataDir) throw new Error('no running Postgres cluster found');
    return Number.parseInt(fs.readFileSync(dataDir, 'utf8').split('\n')[0], 10);
  }
  return Number.parseInt(fs.readFileSync(path.join(RUN_DIR, `${server}.pid`), 'utf8').split(/\s/)[0], 10);
}

const alive = (pid: number): boolean => {
  try { process.kill(pid, 0); return true; } catch { return false; }
};

export async function killServer(server: 'kafka' | 'redis' | 'postgres'): Promise<void> {
  const pid = serverPid(server);
  process.kill(pid, 'SIGKILL');
  for (let i = 0; i < 100 && alive(pid); i++) await sleep(100);
  if (server === 'postgres') await sleep(2_000); // its backends notice and leave the shared memory
}

/** The project's own command brings back whatever is down. */
export async function restartStack(): Promise<void> {
  // A broker killed mid-write recovers every partition's log on start: give it time.
  await run('bash', [path.join(ROOT, 'scripts', 'stack.sh'), 'up'], { timeout: 400_000, env: { ...process.env, STACK_READY_TIMEOUT: '300' } });
}

export interface RoleSpec { name: string; roles: string; port: number; http: boolean; extraEnv?: Record<string, string> }

/** A role process that can be killed and started again with the same settings. */
export class RoleProcess {
  service: BenchService | null = null;
  constructor(readonly spec: RoleSpec, private readonly databaseUrl: string) {}

  async start(): Promise<void> {
    // LOG_LEVEL info: a process without HTTP is ready once it logs "service started".
    const extraEnv = { LOG_LEVEL: this.spec.http ? 'warn' : 'info', ...this.spec.extraEnv };
    this.service = startService({ port: this.spec.port, roles: this.spec.roles, databaseUrl: this.databaseUrl, extraEnv }, 'chaos');
    await waitReady(this.service, this.spec.http);
  }

  kill(): void {
    this.service?.child.kill('SIGKILL');
  }

  async stop(): Promise<void> {
    if (this.service) await stopService(this.service);
  }
}
