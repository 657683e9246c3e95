// The ledger benchmark's batch case (issue 43): internal transfers sent through
// POST /v1/transfer-batches, `size` to a request, from a few connections for a while. A batch is
// one ledger command decided in one round, so its transfers share the round trips a single
// request pays alone; the figure to compare is transfers per second beside single requests.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { percentile, request } from './harness';

export interface BatchFigures { size: number; batches: number; transfers: number; perSecond: number; requestP50: number; requestP99: number; late: number; failed: number }

interface Member { id: string; email: string; key: string }

export async function batchLoad(port: number, members: Member[], size: number, seconds: number, connections: number): Promise<BatchFigures> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const latencies: number[] = [];
  let transfers = 0;
  let late = 0;
  let failed = 0;
  const started = performance.now();
  const end = started + seconds * 1000;
  await Promise.all(Array.from({ length: connections }, async () => {
    while (performance.now() < end) {
      const sender = members[Math.floor(Math.random() * members.length)];
      const items = Array.from({ length: size }, () => {
        let recipient = members[Math.floor(Math.random() * members.length)];
        if (recipient === sender) recipient = members[(members.indexOf(sender) + 1) % members.length];
        return { recipient_email: recipient.email, amount: '0.01', currency: 'USD' };
      });
      const sent = performance.now();
      const answer = await request(agent, port, 'POST', '/v1/transfer-batches', { atomic: false, transfers: items }, { authorization: `Bearer ${sender.key}`, 'idempotency-key': randomUUID() })
        .catch(() => ({ status: -1, body: null }));
      latencies.push(performance.now() - sent);
      if (answer.status === 201) transfers += (answer.body.items as Array<{ status: string }>).filter((i) => i.status === 'created').length;
      else if (answer.status === 202) late++;
      else failed++;
    }
  }));
  const elapsedS = (performance.now() - started) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return { size, batches: latencies.length, transfers, perSecond: transfers / elapsedS, requestP50: percentile(latencies, 0.5), requestP99: percentile(latencies, 0.99), late, failed };
}

export function printBatchRows(single: { transfers: number; perSecond: number; postP50: number; postP99: number }, rows: BatchFigures[]): void {
  console.log('\nthrough                        | transfers | per s  | request p50 | request p99 | requests | 202 | failed');
  console.log(`${'single POST /v1/transfers'.padEnd(30)} | ${String(single.transfers).padStart(9)} | ${single.perSecond.toFixed(0).padStart(6)} | ${single.postP50.toFixed(1).padStart(11)} | ${single.postP99.toFixed(1).padStart(11)} | ${String(single.transfers).padStart(8)} |   - |      -`);
  for (const f of rows) {
    console.log(`${`batches of ${f.size}`.padEnd(30)} | ${String(f.transfers).padStart(9)} | ${f.perSecond.toFixed(0).padStart(6)} | ${f.requestP50.toFixed(1).padStart(11)} | ${f.requestP99.toFixed(1).padStart(11)} | ${String(f.batches).padStart(8)} | ${String(f.late).padStart(3)} | ${String(f.failed).padStart(6)}`);
  }
  for (const f of rows) console.log(`batches of ${f.size}: ${(f.perSecond / single.perSecond).toFixed(1)}x the transfers per second of single requests`);
}
