// CPU accounting for the benchmarks, from /proc: the service processes, this load generator,
// the stack (Postgres backends, Redis, the JVMs of Kafka and the registry) and the whole host.
import fs from 'node:fs';

export type CpuGroup = 'service' | 'loadGenerator' | 'postgres' | 'redis' | 'jvm' | 'host';
/** CPU in % of one core over a window, by group. */
export type CpuShares = Record<CpuGroup, number>;
export interface CpuSnapshot { processes: Map<string, { group: CpuGroup; ms: number }>; hostMs: number }

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** User plus system CPU time of a process so far, in ms (from /proc/<pid>/stat); 0 if it is gone. */
function processCpuMs(pid: number | string): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND) * 1000;
  } catch {
    return 0;
  }
}

/**
 * CPU time so far (ms) of the service, this load generator, the stack (Postgres backends, Redis,
 * the JVMs of Kafka and the registry) and the whole host (busy time of all cores, from
 * /proc/stat): the host minus the rest is what other work on the machine took.
 */
export function cpuSnapshot(servicePids: number[]): CpuSnapshot {
  const processes = new Map<string, { group: CpuGroup; ms: number }>();
  for (const pid of servicePids) processes.set(String(pid), { group: 'service', ms: processCpuMs(pid) });
  processes.set(String(process.pid), { group: 'loadGenerator', ms: processCpuMs(process.pid) });
  for (const pid of fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    let comm = '';
    try { comm = fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim(); } catch { continue; }
    const group: CpuGroup | null = comm === 'postgres' ? 'postgres' : comm === 'redis-server' ? 'redis' : comm === 'java' ? 'jvm' : null;
    if (group && !processes.has(pid)) processes.set(pid, { group, ms: processCpuMs(pid) });
  }
  const [user, nice, system, , , irq, softirq, steal] = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  return { processes, hostMs: ((user + nice + system + irq + softirq + steal) / TICKS_PER_SECOND) * 1000 };
}

/** CPU per group between two snapshots; a process that started in between counts from zero. */
export function cpuBetween(start: CpuSnapshot, end: CpuSnapshot, windowMs: number): CpuShares {
  const shares: CpuShares = { service: 0, loadGenerator: 0, postgres: 0, redis: 0, jvm: 0, host: 0 };
  for (const [pid, { group, ms }] of end.processes) shares[group] += ms - (start.processes.get(pid)?.ms ?? 0);
  shares.host = end.hostMs - start.hostMs;
  for (const group of Object.keys(shares) as CpuGroup[]) shares[group] = (shares[group] / windowMs) * 100;
  return shares;
}

/** Work on the host outside the service, this load generator and the stack (steal, kernel threads...). */
export const otherCpu = (cpu: CpuShares): number => Math.max(0, cpu.host - cpu.service - cpu.loadGenerator - cpu.postgres - cpu.redis - cpu.jvm);
