// Avro schemas of every topic live in schemas/<topic>.v<N>.avsc and are registered in the
// schema registry under "<topic>-value" with BACKWARD compatibility, so readers outside this
// service (analytics) can decode every message by the schema id it carries.
import fs from 'node:fs';
import path from 'node:path';
import { SchemaRegistry, SchemaType, COMPATIBILITY } from '@kafkajs/confluent-schema-registry';
import { log } from '../log';
import { TimedOut, withTimeout } from '../with-timeout';
import type { TopicNames } from './topics';

export const SCHEMAS_DIRECTORY = path.join(__dirname, '..', '..', '..', 'schemas');

export interface SchemaFile {
  topic: string;
  version: number;
  schema: string;
}

/** The newest schema version of each topic in schemas/. */
export function readSchemaFiles(directory = SCHEMAS_DIRECTORY): SchemaFile[] {
  const newest = new Map<string, SchemaFile>();
  for (const file of fs.readdirSync(directory)) {
    const match = /^(.+)\.v(\d+)\.avsc$/.exec(file);
    if (!match) continue;
    const candidate = { topic: match[1], version: Number.parseInt(match[2], 10), schema: fs.readFileSync(path.join(directory, file), 'utf8') };
    const current = newest.get(candidate.topic);
    if (!current || current.version < candidate.version) newest.set(candidate.topic, candidate);
  }
  return [...newest.values()];
}

/**
 * How long one registration may go unanswered before it is asked again, and how often. The
 * registry has been seen to leave one request unanswered for minutes while it answered the same
 * request of other processes at once (a service's start hung in it); registering is idempotent,
 * so the request is sent again rather than waited on.
 */
export interface RegistrationPatience { attemptMs: number; attempts: number }
const REGISTRATION_PATIENCE: RegistrationPatience = { attemptMs: 15_000, attempts: 4 };

/** Encodes and decodes the messages of the topics, by registry id. */
export class AvroCodec {
  private readonly ids = new Map<string, number>();

  constructor(readonly registry: SchemaRegistry, private readonly names: TopicNames, private readonly patience = REGISTRATION_PATIENCE) {}

  /** Registers the newest schema of every topic (idempotent: an unchanged schema keeps its id). */
  async registerAll(files: SchemaFile[] = readSchemaFiles()): Promise<Map<string, number>> {
    for (const file of files) {
      const subject = `${this.names.full(file.topic)}-value`;
      this.ids.set(file.topic, await this.registerPatiently(subject, file.schema));
    }
    return this.ids;
  }

  private async registerPatiently(subject: string, schema: string): Promise<number> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        // An attempt left unanswered is left to the registry: a later answer changes nothing.
        return await withTimeout(this.register(subject, schema), this.patience.attemptMs, `no answer registering ${subject}`);
      } catch (error) {
        if (!(error instanceof TimedOut)) throw error;
      }
      if (attempt >= this.patience.attempts) {
        throw new Error(`the schema registry did not answer registering ${subject} in ${attempt} attempts of ${this.patience.attemptMs} ms`);
      }
      log.warn({ subject, attempt, ms: this.patience.attemptMs }, 'the schema registry did not answer a registration in time: asking again');
    }
  }

  private async register(subject: string, schemaText: string): Promise<number> {
    const schema = { type: SchemaType.AVRO as const, schema: schemaText };
    try {
      return (await this.registry.register(schema, { subject, compatibility: COMPATIBILITY.BACKWARD })).id;
    } catch (error) {
      // Another process of the service set the subject's rule first (processes of several roles
      // starting together): the rule is the one wanted, so register under it.
      if (!/rule named 'COMPATIBILITY' already exists/i.test((error as Error).message)) throw error;
      return (await this.registry.register(schema, { subject })).id;
    }
  }

  schemaId(topic: string): number {
    const id = this.ids.get(topic);
    if (id === undefined) throw new Error(`no registered schema for topic "${topic}"`);
    return id;
  }

  encode(topic: string, value: unknown): Promise<Buffer> {
    return this.registry.encode(this.schemaId(topic), value);
  }

  decode<T>(buffer: Buffer): Promise<T> {
    return this.registry.decode(buffer) as Promise<T>;
  }
}

export function createRegistry(url: string): SchemaRegistry {
  return new SchemaRegistry({ host: url, retry: { retries: 3, initialRetryTimeInSecs: 0.1 } });
}
