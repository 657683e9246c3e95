// Runs the seed's fault schedule against the run's own processes (SIGKILL then restart with the
// same settings; SIGSTOP past the consumers' session timeout, then SIGCONT) and, with faults "on",
// against the shared stack's servers (test/chaos/components.ts: SIGKILL, then the stack script).
import { sleep } from '../bench/harness';
import { killServer, restartStack, type RoleProcess } from '../chaos/components';
import type { Fault, ProcessTarget } from './plan';
import { controlHeaders } from '../support/secrets';

export interface FaultLog { done: number; lines: string[] }

export async function runFaults(
  schedule: Fault[], roles: Record<ProcessTarget, RoleProcess>, flushRedisKeys: () => Promise<void>, railsUrl: string,
  startedAt: number, stop: { now: boolean }, log: FaultLog,
): Promise<void> {
  for (const fault of schedule) {
    while (!stop.now && Date.now() - startedAt < fault.atMs) await sleep(200);
    if (stop.now) return;
    const at = ((Date.now() - startedAt) / 1000).toFixed(1);
    log.lines.push(`${at}s ${fault.action} ${fault.target} for ${fault.downMs} ms`);
    if (fault.action === 'outage') {
      // The partner stays down while the schedule goes on (a real outage overlaps other faults).
      await fetch(`${railsUrl}/${fault.target}/_control/outage?ms=${fault.downMs}`, { method: 'POST', headers: controlHeaders() }).catch(() => undefined);
    } else if (fault.target === 'redis_keys') {
      await flushRedisKeys();
    } else if (fault.target === 'kafka' || fault.target === 'redis' || fault.target === 'postgres') {
      await killServer(fault.target);
      await sleep(fault.downMs);
      await restartStack();
    } else {
      const role = roles[fault.target as ProcessTarget];
      const child = role.service?.child;
      if (fault.action === 'stop' && child) {
        child.kill('SIGSTOP');
        await sleep(fault.downMs);
        child.kill('SIGCONT');
      } else {
        role.kill();
        await sleep(fault.downMs);
        await role.start();
      }
    }
    log.done++;
  }
}
