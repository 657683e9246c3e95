// Runs the seed's fault schedule, each fault once the clients have begun its count of operations:
// against the run's own processes (SIGKILL then restart with the same settings; SIGSTOP past the
// consumers' session timeout, then SIGCONT; a restart with the wall clock stepped, then one on
// the right time), their links (a proxy cut, or one that stalls every
// reply, then whole again) and, with faults "on", against the shared stack's servers
// (test/chaos/components.ts: SIGKILL then the stack script, or SIGSTOP then SIGCONT).
import { existsSync } from 'node:fs';
import { sleep } from '../bench/harness';
import { killServer, pauseServer, restartStack, type RoleProcess } from '../chaos/components';
import type { TcpProxy } from '../support/tcp-proxy';
import type { Window } from './latency';
import type { Fault, LinkTarget, ProcessTarget } from './plan';
import { controlHeaders } from '../support/secrets';

export interface FaultLog { done: number; lines: string[] }

/** How long after a fault the service may still be recovering (consumer groups rejoin, retries come due). */
const RECOVERY_MS = 15_000;

/**
 * The settings that run a process `stepMs` off the wall clock: libfaketime (scripts/stack.sh
 * tools installs it) shifts what the process reads as the time of day, not its monotonic clock,
 * so its timers keep their pace as under a real step of the system clock.
 */
function steppedClock(stepMs: number): Record<string, string> {
  const library = ['/usr/lib/x86_64-linux-gnu', '/usr/lib/aarch64-linux-gnu', '/usr/lib'].map((dir) => `${dir}/faketime/libfaketime.so.1`).find((file) => existsSync(file));
  if (!library) throw new Error('libfaketime is missing: run bash scripts/stack.sh tools');
  const seconds = (stepMs / 1000).toFixed(3);
  return { LD_PRELOAD: library, FAKETIME: stepMs < 0 ? seconds : `+${seconds}`, DONT_FAKE_MONOTONIC: '1' };
}

/** What a fault acts on: the run's processes, the proxies of its links, its Redis keys and the mock rails' control. */
export interface FaultTargets { roles: Record<ProcessTarget, RoleProcess>; links: Record<LinkTarget, TcpProxy>; flushRedisKeys: () => Promise<void>; railsUrl: string }

export async function runFault(fault: Fault, targets: FaultTargets): Promise<void> {
  if (fault.action === 'outage') {
    // The partner stays down while the schedule goes on (a real outage overlaps other faults).
    await fetch(`${targets.railsUrl}/${fault.target}/_control/outage?ms=${fault.downMs}`, { method: 'POST', headers: controlHeaders() }).catch(() => undefined);
  } else if (fault.action === 'partition' || fault.action === 'stall') {
    const proxy = targets.links[fault.target as LinkTarget];
    if (fault.action === 'partition') await proxy.cut();
    else proxy.dropReplies = true;
    try {
      await sleep(fault.downMs);
    } finally {
      proxy.dropReplies = false;
      await proxy.restore();
    }
  } else if (fault.target === 'redis_keys') {
    await targets.flushRedisKeys();
  } else if (fault.target === 'kafka' || fault.target === 'redis' || fault.target === 'postgres') {
    if (fault.action === 'stop') await pauseServer(fault.target, fault.downMs);
    else {
      await killServer(fault.target);
      await sleep(fault.downMs);
      await restartStack();
    }
  } else {
    const role = targets.roles[fault.target as ProcessTarget];
    const child = role.service?.child;
    if (fault.action === 'clock_step') {
      role.kill();
      await role.start(undefined, steppedClock(fault.stepMs ?? 0));
      await sleep(fault.downMs);
      role.kill();
      await role.start();
    } else if (fault.action === 'stop' && child) {
      child.kill('SIGSTOP');
      await sleep(fault.downMs);
      child.kill('SIGCONT');
    } else {
      role.kill();
      await sleep(fault.downMs);
      await role.start();
    }
  }
}

/** Each fault of the schedule when `opsBegun()` reaches its count, until `stop.now`; `onFault` is told of each as it fires. */
export async function runFaults(
  schedule: Fault[], targets: FaultTargets, opsBegun: () => number, startedAt: number, stop: { now: boolean }, log: FaultLog, onFault: (fault: Fault) => void,
  windows: Window[],
): Promise<void> {
  for (const fault of schedule) {
    while (!stop.now && opsBegun() < fault.atOp) await sleep(50);
    if (stop.now) return;
    log.lines.push(`${((Date.now() - startedAt) / 1000).toFixed(1)}s (operation ${opsBegun()}) ${fault.action} ${fault.target} for ${fault.downMs} ms`);
    onFault(fault);
    // Its window: while it acts, and the time the service takes to recover from it.
    const window: Window = { client: -1, from: Date.now(), to: Number.POSITIVE_INFINITY };
    windows.push(window);
    await runFault(fault, targets);
    window.to = Math.max(Date.now(), window.from + fault.downMs) + RECOVERY_MS;
    log.done++;
  }
}
