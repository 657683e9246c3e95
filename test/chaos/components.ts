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

type Server = 'kafka' | 'redis' | 'postgres';

const PORTS: Record<Server, () => string> = {
  kafka: () => (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(',')[0].split(':')[1],
  redis: () => new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379').port || '6379',
  postgres: () => new URL(process.env.DATABASE_URL ?? 'postgres://127.0.0.1:5432/x').port || '5432',
};

/** The pid listening on the server's port: whichever checkout's stack script started it. */
async function serverPid(server: Server): Promise<number> {
  const { stdout } = await run('ss', ['-Hltnp', `sport = :${PORTS[server]()}`]);
  const pid = /pid=(\d+)/.exec(stdout)?.[1];
  if (!pid) throw new Error(`nothing listens on ${server}'s port ${PORTS[server]()}`);
  return Number.parseInt(pid, 10);
}

/**
 * The stack directory of the running broker (from its command line): the restart must use the
 * same data, or the broker would come back without the topics.
 */
async function brokerStackDir(): Promise<string> {
  const cmdline = fs.readFileSync(`/proc/${await serverPid('kafka')}/cmdline`, 'utf8').split('\0');
  const properties = cmdline.find((arg) => arg.endsWith('/data/kafka/server.properties'));
  return properties ? properties.slice(0, -'/data/kafka/server.properties'.length) : path.join(ROOT, '.stack');
}

const alive = (pid: number): boolean => {
  try { process.kill(pid, 0); return true; } catch { return false; }
};

let stackDir: string | null = null;

export async function killServer(server: Server): Promise<void> {
  stackDir ??= await brokerStackDir();
  const pid = await serverPid(server);
  process.kill(pid, 'SIGKILL');
  for (let i = 0; i < 100 && alive(pid); i++) await sleep(100);
  if (server === 'postgres') await sleep(2_000); // its backends notice and leave the shared memory
}

/** The pids of a server and its children (Postgres: the postmaster and every backend). */
function withChildren(pid: number): number[] {
  const children = fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d)).filter((d) => {
    try { return fs.readFileSync(`/proc/${d}/stat`, 'utf8').split(') ')[1]?.split(' ')[1] === String(pid); } catch { return false; }
  });
  return [pid, ...children.map(Number)];
}

/** Pauses a server (SIGSTOP, with its children) for `ms`, then lets it go on (SIGCONT): a stall, not a crash. */
export async function pauseServer(server: Server, ms: number): Promise<void> {
  const pids = withChildren(await serverPid(server));
  for (const pid of pids) { try { process.kill(pid, 'SIGSTOP'); } catch { /* gone */ } }
  try {
    await sleep(ms);
  } finally {
    for (const pid of pids) { try { process.kill(pid, 'SIGCONT'); } catch { /* gone */ } }
  }
}

/** The project's own command brings back whatever is down, on the stack directory it ran from. */
export async function restartStack(): Promise<void> {
  // A broker killed mid-write recovers every partition's log on start: give it time.
  const env = { ...process.env, STACK_READY_TIMEOUT: '300', ...(stackDir ? { STACK_DIR: stackDir } : {}) };
  await run('bash', [path.join(ROOT, 'scripts', 'stack.sh'), 'up'], { timeout: 400_000, env });
}

export interface RoleSpec { name: string; roles: string; port: number; http: boolean; extraEnv?: Record<string, string>; logFile?: string }

/** A role process that can be killed and started again with the same settings. */
export class RoleProcess {
  service: BenchService | null = null;
  constructor(readonly spec: RoleSpec, private readonly databaseUrl: string) {}

  /**
   * `readyTimeoutMs`: longer for a first start right after a broker restart, which may still be
   * recovering its logs. `env`: settings of this start only (a clock step's libfaketime).
   */
  async start(readyTimeoutMs?: number, env: Record<string, string> = {}): Promise<void> {
    // LOG_LEVEL info: a process without HTTP is ready once it logs "service started".
    const extraEnv = { LOG_LEVEL: this.spec.http ? 'warn' : 'info', ...this.spec.extraEnv, ...env };
    this.service = startService({ port: this.spec.port, roles: this.spec.roles, databaseUrl: this.databaseUrl, extraEnv, logFile: this.spec.logFile }, 'chaos');
    await waitReady(this.service, this.spec.http, readyTimeoutMs);
  }

  kill(): void {
    this.service?.child.kill('SIGKILL');
  }

  async stop(): Promise<void> {
    if (this.service) await stopService(this.service);
  }
}
