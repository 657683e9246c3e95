// The shared resources of one process: connections to Postgres, Redis, Kafka and the schema
// registry, created once and closed in reverse order on shutdown.
import type { Admin, Kafka, Producer } from 'kafkajs';
import type { Config, Role } from './config';
import { createDb, ensureDatabase, migrateLatest, type Db } from './db';
import { createKafka, createProducer } from './kafka/client';
import { AvroCodec, createRegistry } from './kafka/registry';
import { ensureTopics, TopicNames } from './kafka/topics';
import { log } from './log';
import { supervisedThreads } from './kafka/supervised-thread';
import { stillWarming, WARM_CONNECTIONS } from './warm-up';
import { createRedis, redisReady, type RedisClient } from './redis';
import { withTimeout } from './with-timeout';

export interface Runtime {
  config: Config;
  db: Db;
  redis: RedisClient;
  kafka: Kafka;
  admin: Admin;
  producer: Producer;
  codec: AvroCodec;
  names: TopicNames;
  close(): Promise<void>;
}

export interface RunningRole {
  role: Role;
  /** Where an HTTP role listens. */
  url?: string;
  /** Stops taking new work, finishes what is in flight, commits offsets. */
  stop(): Promise<void>;
}

export interface ReadinessReport {
  ready: boolean;
  checks: Record<string, { ok: boolean; latency_ms: number; error?: string }>;
}

/** Connects everything, runs migrations, creates topics and registers schemas. */
export async function openRuntime(config: Config): Promise<Runtime> {
  const phases = new OpeningPhases();
  try {
    return await openPhases(config, phases);
  } finally {
    phases.end();
  }
}

async function openPhases(config: Config, phases: OpeningPhases): Promise<Runtime> {
  await ensureDatabase(config.databaseUrl);
  // The connections warmed before the process says it is ready stay open (src/warm-up.ts).
  const db = createDb(config.databaseUrl, 20, WARM_CONNECTIONS);
  const applied = await migrateLatest(db);
  phases.done('postgres');
  if (applied.length > 0) log.info({ applied }, 'migrations applied');

  const redis = createRedis(config.redisUrl, config.redisKeyPrefix);
  await redisReady(redis);
  phases.done('redis');

  const names = new TopicNames(config.kafkaTopicPrefix);
  const kafka = createKafka(config.kafkaBrokers, `payments-${process.pid}`);
  const admin = kafka.admin();
  await admin.connect();
  const created = await ensureTopics(admin, names.all(), config.kafkaPartitions);
  if (created.length > 0) log.info({ created, partitions: config.kafkaPartitions }, 'topics created');
  const producer = await createProducer(kafka);
  phases.done('kafka');

  const codec = new AvroCodec(createRegistry(config.schemaRegistryUrl), names);
  await codec.registerAll();
  phases.done('schema_registry');
  phases.report();

  return {
    config, db, redis, kafka, admin, producer, codec, names,
    async close() {
      await producer.disconnect().catch((error) => log.warn({ err: error }, 'producer disconnect failed'));
      await admin.disconnect().catch(() => undefined);
      redis.disconnect();
      await db.destroy();
    },
  };
}

/** The order openPhases opens the dependencies in: the phase under way is the first not done. */
const PHASES = ['postgres', 'redis', 'kafka', 'schema_registry'] as const;
/** A phase that outlasts this is reported while it goes on, so an opening that hangs says where. */
const SLOW_PHASE_MS = 10_000;

/** How long each dependency took to open; reported as a warning when the whole took long. */
class OpeningPhases {
  private readonly started = performance.now();
  private last = this.started;
  private readonly ms: Record<string, number> = {};
  private readonly slow = setInterval(() => {
    const phase = PHASES.find((name) => !(name in this.ms));
    log.warn({ phase, ms: Math.round(performance.now() - this.last) }, 'runtime still opening');
  }, SLOW_PHASE_MS);

  done(phase: (typeof PHASES)[number]): void {
    const now = performance.now();
    this.ms[phase] = Math.round(now - this.last);
    this.last = now;
  }

  end(): void {
    clearInterval(this.slow);
  }

  report(): void {
    const total = Math.round(this.last - this.started);
    (total > 10_000 ? log.warn : log.info).call(log, { ms: total, phases: this.ms }, 'runtime opened');
  }
}

async function timed(check: () => Promise<unknown>): Promise<{ ok: boolean; latency_ms: number; error?: string }> {
  const started = performance.now();
  try {
    await withTimeout(check(), 2000, 'timed out after 2000 ms');
    return { ok: true, latency_ms: Math.round(performance.now() - started) };
  } catch (error) {
    return { ok: false, latency_ms: Math.round(performance.now() - started), error: (error as Error).message };
  }
}

export async function checkReadiness(runtime: Runtime): Promise<ReadinessReport> {
  const [postgres, redis, kafka, registry] = await Promise.all([
    timed(() => runtime.db.raw('SELECT 1')),
    timed(() => runtime.redis.ping()),
    timed(() => runtime.admin.describeCluster()),
    timed(async () => {
      const response = await fetch(`${runtime.config.schemaRegistryUrl}/subjects`);
      if (!response.ok) throw new Error(`registry answered ${response.status}`);
    }),
  ]);
  const checks: ReadinessReport['checks'] = { postgres, redis, kafka, schema_registry: registry };
  // A process that is still warming up would serve its first requests slower than later ones.
  const warming = stillWarming();
  checks.warm = { ok: warming.length === 0, latency_ms: 0, ...(warming.length > 0 ? { error: `warming up: ${warming.join(', ')}` } : {}) };
  // The process's Kafka threads (request-log shipper, outbox publisher): down while restarting.
  for (const thread of supervisedThreads()) {
    const { ok, error } = thread.health();
    checks[`thread:${thread.role}`] = { ok, latency_ms: 0, ...(error && !ok ? { error } : {}) };
  }
  return { ready: Object.values(checks).every((c) => c.ok), checks };
}
