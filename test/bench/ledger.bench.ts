// Ledger benchmarks on the real stack (issue: the ledger engine):
//   1. end to end: internal transfers for BENCH_E2E_S seconds through HTTP → Kafka → ledger →
//      Postgres → Kafka → SSE; POST latency, and POST → transfer.completed seen on the stream;
//   2. hot account: every transfer credits one account; how far throughput drops;
//   3. scaled out: the same load on two API processes and two ledger processes, then the
//      ledger's invariants checked (test/support/load.ts);
//   4. backlog: BENCH_BACKLOG commands queued in Kafka, drained by a ledger process alone;
//   5. batches: the same transfers through POST /v1/transfer-batches, 100 and 1,000 to a request,
//      printed beside the single requests of 1 (batch-load.ts).
// Each prints its anatomy per transfer (anatomy.ts).
//
//   npm run bench:ledger
//
// The service runs as deployed (docker-compose.yml), one process per group of roles:
// api+notifier, ledger, and partners+mock-rails+request-logs; BENCH_SPLIT=0 runs all roles in
// one process instead.
//
// Settings (environment): BENCH_E2E_S (60), BENCH_HOT_S (20), BENCH_SCALED_S (30),
// BENCH_CONNECTIONS (64), BENCH_ACCOUNTS (100), BENCH_BACKLOG (100000), BENCH_PORT (3200; the
// mock rails take the next, a second API process the one after), BENCH_BATCH_S (20; 0 skips the batches),
// BENCH_BATCH_CONNECTIONS (4); BENCH_BATCHES_ONLY=1 runs only 1 and 5.
import { Partitioners } from 'kafkajs';
import knex from 'knex';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import pg from 'pg';
import type { LedgerCommandEnvelope } from '../../ledger/messages';
import type { TransferCreate } from '../../ledger/commands/transfer-create';
import { derivedUuid, idempotentCommandId } from '../../src/idempotency/derived-ids';
import { createKafka } from '../../src/kafka/client'; // before kafkajs: it installs the kafkajs fixes
import { AvroCodec, createRegistry } from '../../src/kafka/registry';
import { TopicNames, TOPICS } from '../../src/kafka/topics';
import { violations } from '../support/load';
import { followEventStream } from '../support/sse';
import { Anatomy } from './anatomy';
import { batchLoad, printBatchRows, type BatchFigures } from './batch-load';
import { cpuBetween, cpuSnapshot, otherCpu, type CpuShares } from './cpu';
import {
    benchNames, cleanUpRedisKeys, cleanUpTopics, env, KAFKA_BROKERS, percentile, recreateDatabase, request, rssMiB, SCHEMA_REGISTRY_URL, sleep,
    startService, stopService, waitReady, type BenchService,
} from './harness';
import { encodeRequest, RawHttpConnection } from './raw-http';

const E2E_S = Number(env.BENCH_E2E_S ?? 60);
const HOT_S = Number(env.BENCH_HOT_S ?? 20);
const SCALED_S = Number(env.BENCH_SCALED_S ?? 30);
const SCALED_WARMUP_S = 10;
const CONNECTIONS = Number(env.BENCH_CONNECTIONS ?? 64);
const ACCOUNTS = Number(env.BENCH_ACCOUNTS ?? 100);
const BACKLOG = Number(env.BENCH_BACKLOG ?? 100_000);
const PORT = Number(env.BENCH_PORT ?? 3200);
const BATCH_S = Number(env.BENCH_BATCH_S ?? 20);
const BATCH_CONNECTIONS = Number(env.BENCH_BATCH_CONNECTIONS ?? 4);
const BATCHES_ONLY = env.BENCH_BATCHES_ONLY === '1';
const names = benchNames('ledger');

interface Member { id: string; email: string; key: string; token: string }

async function signUpMembers(agent: http.Agent): Promise<Member[]> {
  const members: Member[] = [];
  for (let i = 0; i < ACCOUNTS; i++) {
    const email = `bench-${randomUUID()}@example.com`;
    const answer = await request(agent, PORT, 'POST', '/v1/sandbox/accounts', { email, password: 'bench password 1', business_name: 'Bench', country_code: 'GB' });
    if (answer.status !== 201) throw new Error(`sign-up failed: ${answer.status} ${JSON.stringify(answer.body)}`);
    members.push({ id: answer.body.account.id, email, key: answer.body.api_key.key, token: answer.body.session.token });
    const funded = await request(agent, PORT, 'POST', '/v1/sandbox/faucet', { currency: 'USD', amount: '1000000.00' }, { authorization: `Bearer ${answer.body.api_key.key}`, 'idempotency-key': randomUUID() });
    if (funded.status !== 201) throw new Error(`faucet failed: ${funded.status} ${JSON.stringify(funded.body)}`);
  }
  return members;
}

/** Watches every member's event stream and notes when each transfer's completion arrives. */
function watchCompletions(ports: number[], members: Member[], completedAt: Map<string, number>): () => void {
  const aborter = new AbortController();
  for (const [i, member] of members.entries()) {
    void followEventStream(`http://127.0.0.1:${ports[i % ports.length]}`, member.token, (frame) => {
      if (frame.event === 'transfer.completed' && frame.data) completedAt.set(JSON.parse(frame.data).data.id, performance.now());
    }, aborter.signal).catch((error) => { if (!aborter.signal.aborted) console.error(`event stream of ${member.email}: ${(error as Error).message}`); });
  }
  return () => aborter.abort();
}

interface LoadFigures {
  transfers: number; perSecond: number; postP50: number; postP99: number; postMax: number; sseP50: number; sseP99: number; unseen: number; non2xx: number; rss: number;
  /** CPU while the load ran, in % of one core, by group. */
  cpu: CpuShares;
}

/** Transfers from `CONNECTIONS` connections, spread over the API processes on `ports`. */
async function transferLoad(anatomy: Anatomy, services: BenchService[], ports: number[], members: Member[], seconds: number, hotRecipient: Member | null, quiet = false): Promise<LoadFigures> {
  const completedAt = new Map<string, number>();
  const stopWatching = watchCompletions(ports, members, completedAt);
  await sleep(1_000); // let the streams open
  const sentAt = new Map<string, number>();
  const postLatencies: number[] = [];
  let non2xx = 0;
  const servicePids = services.map((s) => s.child.pid!);
  const cpuAtStart = cpuSnapshot(servicePids);
  const end = performance.now() + seconds * 1000;
  const before = await anatomy.snapshot(services);
  await Promise.all(Array.from({ length: CONNECTIONS }, async (_, c) => {
    const connection = new RawHttpConnection(ports[c % ports.length]);
    while (performance.now() < end) {
      const sender = members[Math.floor(Math.random() * members.length)];
      let recipient = hotRecipient ?? members[Math.floor(Math.random() * members.length)];
      if (recipient === sender) recipient = members[(members.indexOf(sender) + 1) % members.length];
      const key = randomUUID();
      const transferId = derivedUuid('transfer', idempotentCommandId(sender.id, key));
      const started = performance.now();
      sentAt.set(transferId, started);
      const body = JSON.stringify({ recipient_email: recipient.email, amount: '0.01', currency: 'USD' });
      const headers = { authorization: `Bearer ${sender.key}`, 'idempotency-key': key, 'content-type': 'application/json' };
      const status = await connection.send(encodeRequest('POST', '/v1/transfers', headers, body)).then((answer) => answer.status, () => -1);
      postLatencies.push(performance.now() - started);
      if (status !== 201) { non2xx++; sentAt.delete(transferId); }
    }
    connection.close();
  }));
  const cpu = cpuBetween(cpuAtStart, cpuSnapshot(servicePids), seconds * 1000);
  const elapsedS = seconds;
  const after = await anatomy.snapshot(services);
  await sleep(2_000); // the last completions travel to the streams
  stopWatching();
  const sseLatencies: number[] = [];
  let unseen = 0;
  for (const [id, started] of sentAt) {
    const seen = completedAt.get(id);
    if (seen === undefined) unseen++;
    else sseLatencies.push(seen - started);
  }
  postLatencies.sort((a, b) => a - b);
  sseLatencies.sort((a, b) => a - b);
  if (!quiet) anatomy.print(`${hotRecipient ? 'the hot-account load' : 'the uniform load'} on ${ports.length} API process(es)`, postLatencies.length - non2xx, before, after);
  return {
    transfers: postLatencies.length - non2xx, perSecond: (postLatencies.length - non2xx) / elapsedS,
    postP50: percentile(postLatencies, 0.5), postP99: percentile(postLatencies, 0.99), postMax: postLatencies[postLatencies.length - 1] ?? 0,
    sseP50: percentile(sseLatencies, 0.5), sseP99: percentile(sseLatencies, 0.99), unseen, non2xx, rss: services.reduce((sum, s) => sum + rssMiB(s.child.pid!), 0), cpu,
  };
}

/** Queues `count` internal transfer commands straight onto ledger.commands, with no ledger running. */
async function queueBacklog(members: Member[], count: number): Promise<void> {
  const topicNames = new TopicNames(names.kafkaTopicPrefix);
  const codec = new AvroCodec(createRegistry(SCHEMA_REGISTRY_URL), topicNames);
  await codec.registerAll();
  const kafka = createKafka(KAFKA_BROKERS.split(','), 'bench-backlog');
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  try {
    for (let sent = 0; sent < count; sent += 1000) {
      const messages = await Promise.all(Array.from({ length: Math.min(1000, count - sent) }, async () => {
        const sender = members[Math.floor(Math.random() * members.length)];
        let recipient = members[Math.floor(Math.random() * members.length)];
        if (recipient === sender) recipient = members[(members.indexOf(sender) + 1) % members.length];
        const payload: TransferCreate = { transfer_id: randomUUID(), type: 'internal', amount: '0.01', currency: 'USD', recipient_email: recipient.email, note: null };
        const envelope: LedgerCommandEnvelope = { id: randomUUID(), type: 'transfer.create', account_id: sender.id, reply_to: null, issued_at: new Date().toISOString(), payload: JSON.stringify(payload) };
        return { key: sender.id, value: await codec.encode(TOPICS.ledgerCommands, envelope) };
      }));
      await producer.send({ topic: topicNames.full(TOPICS.ledgerCommands), acks: -1, messages });
    }
  } finally {
    await producer.disconnect();
  }
}

async function count(db: pg.Client, table: string): Promise<number> {
  const { rows } = await db.query(`SELECT count(*)::int AS n FROM ${table}`);
  return rows[0].n;
}

async function drainBacklog(anatomy: Anatomy, databaseUrl: string, members: Member[]): Promise<{ seconds: number; commands: number; postings: number; rss: number; cpu: CpuShares }> {
  await queueBacklog(members, BACKLOG);
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const commandsBefore = await count(db, 'processed_commands');
    const postingsBefore = await count(db, 'postings');
    const ledger = startService({ port: PORT + 10, roles: 'ledger', databaseUrl, extraEnv: { LOG_LEVEL: 'info' } }, 'ledger');
    await waitReady(ledger, false);
    const before = await anatomy.snapshot([ledger]);
    const started = performance.now();
    const cpuAtStart = cpuSnapshot([ledger.child.pid!]);
    let rss = 0;
    for (;;) {
      const done = (await count(db, 'processed_commands')) - commandsBefore;
      rss = Math.max(rss, rssMiB(ledger.child.pid!));
      if (done >= BACKLOG) break;
      if (performance.now() - started > 600_000) throw new Error(`backlog not drained after 600 s: ${done} of ${BACKLOG}`);
      await sleep(100);
    }
    const seconds = (performance.now() - started) / 1000;
    const cpu = cpuBetween(cpuAtStart, cpuSnapshot([ledger.child.pid!]), seconds * 1000);
    const postings = (await count(db, 'postings')) - postingsBefore;
    anatomy.print('draining the backlog (per command)', BACKLOG, before, await anatomy.snapshot([ledger]));
    await stopService(ledger);
    return { seconds, commands: BACKLOG, postings, rss, cpu };
  } finally {
    await db.end();
  }
}

const ms = (value: number) => value.toFixed(1);

/** Starts one process per group of roles; an API process listens on its own port, the rails on PORT + 1. */
async function startProcesses(groups: Array<{ roles: string; port: number }>): Promise<BenchService[]> {
  const services: BenchService[] = [];
  for (const { roles, port } of groups) {
    const http = roles.includes('api') || roles === 'all';
    // Processes without HTTP are ready when they log their start (at info level).
    const service = startService({
      port, roles, databaseUrl: names.databaseUrl,
      extraEnv: { RATE_LIMIT_RPS: '1000000', RATE_LIMIT_BURST: '1000000', LOG_LEVEL: http ? 'warn' : 'info', MOCK_RAILS_PORT: String(PORT + 1), MOCK_RAILS_URL: `http://127.0.0.1:${PORT + 1}` },
    }, 'ledger');
    services.push(service);
    await waitReady(service, http);
  }
  return services;
}

const stopAll = async (services: BenchService[]) => { for (const service of [...services].reverse()) await stopService(service); };

/** The ledger's invariants on the bench database: every query of LEDGER_INVARIANTS returns nothing. */
async function invariantViolations(): Promise<Record<string, unknown[]>> {
  const db = knex({ client: 'pg', connection: names.databaseUrl });
  try {
    return await violations(db);
  } finally {
    await db.destroy();
  }
}

function printRow(name: string, f: LoadFigures): void {
  console.log(`${name.padEnd(30)} | ${String(f.transfers).padStart(9)} | ${f.perSecond.toFixed(0).padStart(6)} | ${ms(f.postP50).padStart(8)} | ${ms(f.postP99).padStart(8)} | ${ms(f.postMax).padStart(8)} | ${ms(f.sseP50).padStart(8)} | ${ms(f.sseP99).padStart(8)} | ${String(f.unseen).padStart(6)} | ${String(f.non2xx).padStart(7)} | ${String(f.rss).padStart(7)}`);
}

async function main(): Promise<void> {
  await recreateDatabase(names.databaseUrl);
  const anatomy = await Anatomy.open(names.databaseUrl, names.kafkaTopicPrefix);
  const split = env.BENCH_SPLIT !== '0';
  const groups = split ? ['mock-rails,partners,request-logs', 'ledger', 'api,notifier'] : ['all'];
  let services: BenchService[] = [];
  try {
    services = await startProcesses(groups.map((roles) => ({ roles, port: PORT })));
    const members = await signUpMembers(new http.Agent({ keepAlive: true, maxSockets: 8 }));
    console.log(`${ACCOUNTS} accounts funded; ${CONNECTIONS} connections; processes: ${groups.join(' | ')}`);

    const uniform = await transferLoad(anatomy, services, [PORT], members, E2E_S, null);
    const batches: BatchFigures[] = [];
    if (BATCH_S > 0) for (const size of [100, 1000]) batches.push(await batchLoad(PORT, members, size, BATCH_S, BATCH_CONNECTIONS));
    printBatchRows(uniform, batches);
    if (BATCHES_ONLY) return;
    const hot = await transferLoad(anatomy, services, [PORT], members, HOT_S, members[0]);
    await stopAll(services);
    // Scaled out: two ledger processes share the command partitions, and two API processes the
    // connections; each API process reads only its own replies.
    const scaledGroups = ['mock-rails,partners,request-logs', 'ledger', 'ledger', 'api,notifier', 'api,notifier'];
    services = await startProcesses(scaledGroups.map((roles, i) => ({ roles, port: i === 4 ? PORT + 2 : PORT })));
    await transferLoad(anatomy, services, [PORT, PORT + 2], members, SCALED_WARMUP_S, null, true); // new processes: let their code warm up, unmeasured
    const scaled = await transferLoad(anatomy, services, [PORT, PORT + 2], members, SCALED_S, null);
    await stopAll(services);
    services = [];
    const broken = await invariantViolations();
    const drain = await drainBacklog(anatomy, names.databaseUrl, members);

    console.log('\nscenario                       | transfers | per s  | POST p50 | POST p99 | POST max | →SSE p50 | →SSE p99 | unseen | non-2xx | RSS MiB (all service processes)');
    printRow(`end to end, ${E2E_S} s`, uniform);
    printRow(`hot account, ${HOT_S} s`, hot);
    printRow(`2 API + 2 ledger, ${SCALED_S} s`, scaled);
    console.log('\nCPU while the load ran, in % of one core (this host has 2 cores), and host CPU per transfer:');
    for (const [name, f] of [['end to end', uniform], ['hot account', hot], ['scaled out', scaled]] as const) {
      const { cpu } = f;
      console.log(`${name.padEnd(12)} service ${cpu.service.toFixed(0)} %, load generator ${cpu.loadGenerator.toFixed(0)} %, postgres ${cpu.postgres.toFixed(0)} %, redis ${cpu.redis.toFixed(0)} %, JVMs ${cpu.jvm.toFixed(0)} %, other ${otherCpu(cpu).toFixed(0)} %; host busy ${cpu.host.toFixed(0)} %; ${((cpu.host - cpu.loadGenerator) * 10 / f.perSecond).toFixed(2)} ms of CPU per transfer outside the load generator`);
    }
    console.log(`hot account throughput drop: ${(uniform.perSecond / hot.perSecond).toFixed(2)}x (goal: under 2x)`);
    console.log(`scaled out (2 API + 2 ledger processes) against one of each: ${(scaled.perSecond / uniform.perSecond).toFixed(2)}x the throughput; ledger invariants after it: ${Object.keys(broken).length === 0 ? 'all hold' : `BROKEN ${JSON.stringify(broken)}`}`);
    console.log(`\nbacklog: ${drain.commands} commands drained by one ledger process in ${drain.seconds.toFixed(1)} s: ${(drain.commands / drain.seconds).toFixed(0)} commands/s, ${(drain.postings / drain.seconds).toFixed(0)} postings/s (${drain.postings} postings), peak RSS ${drain.rss} MiB`);
    console.log(`backlog CPU, in % of one core: ledger ${drain.cpu.service.toFixed(0)} %, postgres ${drain.cpu.postgres.toFixed(0)} %, JVMs ${drain.cpu.jvm.toFixed(0)} %, other ${otherCpu(drain.cpu).toFixed(0)} %; host busy ${drain.cpu.host.toFixed(0)} %`);
    if (Object.keys(broken).length > 0) process.exitCode = 1;
  } finally {
    await stopAll(services);
    await anatomy.close();
    await Promise.all([cleanUpTopics(names.kafkaTopicPrefix), cleanUpRedisKeys(names.redisKeyPrefix)]);
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
