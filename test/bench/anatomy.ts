// The anatomy of an operation, for the speed benchmarks: between two snapshots, per operation,
// the CPU and the socket calls of each service process, the CPU of Postgres and of the JVMs
// (Kafka and the registry), the Kafka messages written to the run's topics, and the Postgres
// transactions, rows and WAL bytes. Each gain shows in these figures, and each regression.
import fs from 'node:fs';
import pg from 'pg';
import { createKafka } from '../../src/kafka/client';
import { cpuSnapshot, type CpuSnapshot } from './cpu';
import { KAFKA_BROKERS, type BenchService } from './harness';

interface ProcessCounters { cpuMs: number; reads: number; writes: number }

/** CPU time (ms) and read/write system calls so far of a process; zeros if it is gone. */
function processCounters(pid: number): ProcessCounters {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const io = fs.readFileSync(`/proc/${pid}/io`, 'utf8');
    const count = (name: string) => Number(new RegExp(`${name}: (\\d+)`).exec(io)?.[1] ?? 0);
    return { cpuMs: (Number(fields[11]) + Number(fields[12])) * 10, reads: count('syscr'), writes: count('syscw') };
  } catch {
    return { cpuMs: 0, reads: 0, writes: 0 };
  }
}

interface DatabaseCounters { commits: number; inserted: number; updated: number; deleted: number; walBytes: number }

export interface AnatomySnapshot {
  processes: Map<BenchService, ProcessCounters>;
  cpu: CpuSnapshot;
  kafkaMessages: Map<string, number>;
  database: DatabaseCounters;
}

export class Anatomy {
  private constructor(private readonly db: pg.Client, private readonly databaseName: string, private readonly topicPrefix: string) {}

  static async open(databaseUrl: string, topicPrefix: string): Promise<Anatomy> {
    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    return new Anatomy(db, new URL(databaseUrl).pathname.slice(1), topicPrefix);
  }

  async snapshot(services: BenchService[]): Promise<AnatomySnapshot> {
    const [kafkaMessages, database] = await Promise.all([this.kafkaMessages(), this.databaseCounters()]);
    const processes = new Map(services.map((s) => [s, processCounters(s.child.pid!)] as const));
    return { processes, cpu: cpuSnapshot(services.map((s) => s.child.pid!)), kafkaMessages, database };
  }

  /** Prints, per operation, what happened between `before` and `after`. */
  print(what: string, operations: number, before: AnatomySnapshot, after: AnatomySnapshot): void {
    const per = (value: number, digits = 1) => (value / operations).toFixed(digits);
    const lines = [`anatomy of ${what}, per operation (${operations} operations):`];
    for (const [service, end] of after.processes) {
      const start = before.processes.get(service) ?? { cpuMs: 0, reads: 0, writes: 0 };
      lines.push(`  process ${service.roles.padEnd(36)} CPU ${per(end.cpuMs - start.cpuMs, 2)} ms, socket/file writes ${per(end.writes - start.writes)}, reads ${per(end.reads - start.reads)}`);
    }
    const groupMs = (group: 'postgres' | 'jvm' | 'redis') => {
      let ms = 0;
      for (const [pid, { group: g, ms: end }] of after.cpu.processes) if (g === group) ms += end - (before.cpu.processes.get(pid)?.ms ?? 0);
      return ms;
    };
    lines.push(`  postgres CPU ${per(groupMs('postgres'), 2)} ms, Kafka and registry JVMs CPU ${per(groupMs('jvm'), 2)} ms, redis CPU ${per(groupMs('redis'), 2)} ms; host busy ${per(after.cpu.hostMs - before.cpu.hostMs, 2)} ms`);
    const topics = [...after.kafkaMessages].map(([topic, n]) => [topic, n - (before.kafkaMessages.get(topic) ?? 0)] as const).filter(([, n]) => n > 0);
    const messages = topics.reduce((sum, [, n]) => sum + n, 0);
    lines.push(`  Kafka messages ${per(messages, 2)}: ${topics.map(([topic, n]) => `${topic.slice(this.topicPrefix.length)} ${per(n, 2)}`).join(', ')}`);
    const d = (key: keyof DatabaseCounters) => after.database[key] - before.database[key];
    lines.push(`  Postgres transactions ${per(d('commits'), 2)}, rows inserted ${per(d('inserted'), 2)}, updated ${per(d('updated'), 2)}, deleted ${per(d('deleted'), 2)}, WAL ${per(d('walBytes'), 0)} bytes`);
    console.log(lines.join('\n'));
  }

  private async kafkaMessages(): Promise<Map<string, number>> {
    const admin = createKafka(KAFKA_BROKERS.split(','), 'bench-anatomy').admin();
    await admin.connect();
    try {
      const topics = (await admin.listTopics()).filter((t) => t.startsWith(this.topicPrefix) && !t.includes('floor.'));
      const counts = new Map<string, number>();
      for (const topic of topics) {
        const offsets = await admin.fetchTopicOffsets(topic);
        counts.set(topic, offsets.reduce((sum, o) => sum + Number(o.high) - Number(o.low), 0));
      }
      return counts;
    } finally {
      await admin.disconnect();
    }
  }

  private async databaseCounters(): Promise<DatabaseCounters> {
    // The statistics collector publishes counters with a short delay; ask it for fresh ones.
    await this.db.query('SELECT pg_stat_clear_snapshot()');
    const { rows } = await this.db.query(
      `SELECT d.xact_commit::bigint AS commits, d.tup_inserted::bigint AS inserted, d.tup_updated::bigint AS updated, d.tup_deleted::bigint AS deleted,
              (SELECT wal_bytes FROM pg_stat_wal)::bigint AS wal_bytes
         FROM pg_stat_database d WHERE d.datname = $1`,
      [this.databaseName],
    );
    const row = rows[0];
    return { commits: Number(row.commits), inserted: Number(row.inserted), updated: Number(row.updated), deleted: Number(row.deleted), walBytes: Number(row.wal_bytes) };
  }

  async close(): Promise<void> {
    await this.db.end();
  }
}
