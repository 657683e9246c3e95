// Steady-rate load for the latency benchmarks (bench:fx, bench:payments): each request leaves
// at its scheduled time whatever the earlier ones are doing, and its latency counts from that
// time, so a stall shows in the tail instead of slowing the load (no coordinated omission). The
// service runs as deployed: one process for api+notifier, one for the consumers and the rails.
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { cpuBetween, cpuSnapshot, otherCpu, type CpuShares, type CpuSnapshot } from './cpu';
import { percentile, rssMiB, RUN_ID, sleep, startService, waitReady, type BenchService } from './harness';

export interface OpenLoopResult {
  /** Milliseconds from each measured request's scheduled time to its answer, sorted. */
  latencies: number[];
  /** The same latencies by the second of the measured window their request was due in. */
  bySecond: number[][];
  statuses: Map<number, number>;
  /** Scheduled slots with nothing to send. */
  skipped: number;
  /** Milliseconds of each step the API reported in Server-Timing (src/http/server-timing.ts), sorted. */
  stages: Map<string, number[]>;
  cpu: CpuShares;
}

/** POSTs JSON to the service on `port`; with a key, as that key with a fresh Idempotency-Key. */
export async function postJson(port: number, path: string, body: unknown, key: string | null): Promise<{ status: number; body: any; serverTiming: string | null }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (key) Object.assign(headers, { authorization: `Bearer ${key}`, 'idempotency-key': randomUUID() });
  const response = await fetch(`http://127.0.0.1:${port}${path}`, { method: 'POST', body: JSON.stringify(body), headers });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null, serverTiming: response.headers.get('server-timing') };
}

/** A sandbox account signed up on `port` with a customer of its own, both named by `label` and the run. */
export async function accountWithCustomer(port: number, label: string): Promise<{ id: string; key: string; customerId: string }> {
  const signUp = await postJson(port, '/v1/sandbox/accounts', { email: `bench-${label}-${RUN_ID}@example.com`, password: 'bench-password-1234', business_name: 'Bench Ltd', country_code: 'GB' }, null);
  if (signUp.status !== 201) throw new Error(`sign-up: ${signUp.status} ${JSON.stringify(signUp.body)}`);
  const key: string = signUp.body.api_key.key;
  const customer = await postJson(port, '/v1/customers', { email: `customer-${label}-${RUN_ID}@example.com`, business_name: 'Bench Customer Ltd', country_code: 'GB' }, key);
  if (customer.status !== 201) throw new Error(`customer: ${customer.status} ${JSON.stringify(customer.body)}`);
  return { id: signUp.body.account.id, key, customerId: customer.body.id };
}

/** What one request of the load answers: its status, and its Server-Timing header when it has one. */
export type Sent = number | { status: number; serverTiming: string | null };

/** The service split as deployed, on `port` (the rails on the next one), with `extraEnv`; `processes` names each process's roles. */
export async function startSplitService(port: number, databaseUrl: string, label: string, extraEnv: Record<string, string> = {},
  processes = ['mock-rails,ledger,partners,request-logs', 'api,notifier']): Promise<BenchService[]> {
  const services: BenchService[] = [];
  for (const roles of processes) {
    const http = roles === 'all' || roles.split(',').includes('api');
    // The limiter is called, never reached; a process without HTTP is ready when it logs its start.
    const service = startService({ port, roles, databaseUrl, extraEnv: { RATE_LIMIT_RPS: '1000000', RATE_LIMIT_BURST: '1000000', LOG_LEVEL: http ? 'warn' : 'info', ...extraEnv } }, label);
    services.push(service);
    await waitReady(service, http);
  }
  return services;
}

/** Calls `send` RATE times a second; `send` answers the status, or null when it has nothing to send. */
export async function openLoop(rate: number, warmupS: number, durationS: number, servicePids: number[], send: () => Promise<Sent> | null): Promise<OpenLoopResult> {
  const result: OpenLoopResult = { latencies: [], bySecond: Array.from({ length: durationS }, () => []), statuses: new Map(), skipped: 0, stages: new Map(), cpu: null! };
  const inFlight: Promise<void>[] = [];
  const start = performance.now();
  let cpuAtStart: CpuSnapshot | null = null;
  for (let i = 0; i < (warmupS + durationS) * rate; i++) {
    const due = start + (i * 1000) / rate;
    if (due > performance.now()) await sleep(due - performance.now());
    if (i === warmupS * rate) cpuAtStart = cpuSnapshot(servicePids);
    const sent = send();
    if (!sent) { result.skipped++; continue; }
    const measured = i >= warmupS * rate;
    // A request that fails outright (the service refused or timed out the connection) counts as status -1.
    inFlight.push(sent.catch((): Sent => -1).then((answer) => {
      if (!measured) return;
      const latency = performance.now() - due;
      result.latencies.push(latency);
      result.bySecond[Math.floor(i / rate) - warmupS]?.push(latency);
      const status = typeof answer === 'number' ? answer : answer.status;
      result.statuses.set(status, (result.statuses.get(status) ?? 0) + 1);
      if (typeof answer !== 'number' && answer.serverTiming) {
        for (const [, stage, ms] of answer.serverTiming.matchAll(/([\w-]+);dur=([\d.]+)/g)) {
          const values = result.stages.get(stage) ?? [];
          values.push(Number(ms));
          result.stages.set(stage, values);
        }
      }
    }));
  }
  await Promise.all(inFlight);
  result.cpu = cpuBetween(cpuAtStart ?? cpuSnapshot(servicePids), cpuSnapshot(servicePids), durationS * 1000);
  result.latencies.sort((a, b) => a - b);
  for (const values of [...result.stages.values(), ...result.bySecond]) values.sort((a, b) => a - b);
  return result;
}

export function printOpenLoop(what: string, rate: number, durationS: number, result: OpenLoopResult, servicePids: number[]): void {
  const ms = (v: number) => v.toFixed(2);
  const { latencies, cpu } = result;
  console.log(`\n${what} at ${rate}/s for ${durationS} s: ${latencies.length} measured`);
  console.log(`  latency from scheduled send: p50 ${ms(percentile(latencies, 0.5))} ms, p99 ${ms(percentile(latencies, 0.99))} ms, max ${ms(latencies.at(-1) ?? NaN)} ms`);
  console.log(`  statuses: ${[...result.statuses].map(([s, n]) => `${s}×${n}`).join(' ')}${result.skipped > 0 ? `; ${result.skipped} slots with nothing to send` : ''}`);
  if (result.stages.size > 0) {
    const stages = [...result.stages].map(([stage, values]) => `${stage} ${ms(percentile(values, 0.5))}/${ms(percentile(values, 0.99))}`);
    console.log(`  in the API process (Server-Timing, p50/p99 ms): ${stages.join(', ')}`);
  }
  console.log(`  service RSS ${servicePids.reduce((sum, pid) => sum + rssMiB(pid), 0).toFixed(0)} MiB; CPU % of one core: service ${cpu.service.toFixed(0)}, postgres ${cpu.postgres.toFixed(0)}, redis ${cpu.redis.toFixed(0)}, JVMs ${cpu.jvm.toFixed(0)}, load generator ${cpu.loadGenerator.toFixed(0)}, other ${otherCpu(cpu).toFixed(0)} (host has ${os.cpus().length} cores)`);
}

/** p50/p99 of each second of the measured window: where a slow start spends its time. */
export function printBySecond(result: OpenLoopResult): void {
  const cells = result.bySecond.map((values, second) => `${second}s ${percentile(values, 0.5).toFixed(0)}/${percentile(values, 0.99).toFixed(0)}`);
  console.log(`  by second (p50/p99 ms): ${cells.join(', ')}`);
}
