// A service of its own for a finance test (its database, topics and Redis prefix, named after the
// test), so that its days hold only what the test made: an account with a customer linked with
// openbank, pay-ins settled through it, an ambiguous exception made as a bank export without
// references makes one, and the domain events the test asks to see.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Consumer } from 'kafkajs';
import type { DomainEventEnvelope } from '../../ledger/messages';
import { startConsumer } from '../../src/kafka/consumer';
import { TOPICS } from '../../src/kafka/topics';
import { createCustomer, signUp, type SignedUp } from './accounts';
import { dropDatabaseOf } from './database';
import { call, eventually } from './http';
import { daysAfter, today } from './days';
import { linkCustomer } from './partner-links';
import { startService, type TestService } from './service';

export interface SettledPayIn { id: string; external_id: string }

/** A pay-in an ambiguous line could be: its movement in the ledger, and the `ledger_only` exception it has of its own. */
export interface Candidate extends SettledPayIn { ledgerEntryId: string; exceptionId: string }

/** An open ambiguous exception (an uploaded line without reference), and the two pay-ins that fit it. */
export interface AmbiguousLine { exceptionId: string; statementLineId: string; candidates: [Candidate, Candidate] }

export class FinanceDesk {
  service!: TestService;
  owner!: SignedUp;
  customerId!: string;
  private eventsReader: Consumer | null = null;

  constructor(private readonly name: string) {}

  /** Starts the service with `env`, signs up, links a customer, and hands each domain event to `onEvent`. */
  async start(env: Record<string, string>, onEvent: (event: DomainEventEnvelope) => void): Promise<void> {
    const databaseUrl = this.databaseUrl();
    await this.step('dropping its database', dropDatabaseOf(databaseUrl));
    this.service = await this.step('starting its service', startService({
      DATABASE_URL: databaseUrl, KAFKA_TOPIC_PREFIX: `${process.env.KAFKA_TOPIC_PREFIX}${this.name}.`, REDIS_KEY_PREFIX: `${process.env.REDIS_KEY_PREFIX}${this.name}:`, ...env,
    }));
    const base = this.service.baseUrl;
    this.owner = await this.step('signing up', signUp(base));
    this.customerId = (await this.step('creating a customer', createCustomer(base, this.owner.key))).body.id;
    await this.step('linking the customer with openbank', linkCustomer(base, this.owner.key, this.customerId, 'openbank'));
    this.eventsReader = await this.step('joining the domain events', startConsumer<DomainEventEnvelope>(this.service.runtime, {
      groupId: `${this.service.runtime.names.prefix}${this.name}-events.${randomUUID()}`, topic: TOPICS.domainEvents, fromBeginning: true,
      handleBatch: async (messages) => { for (const { value } of messages) onEvent(value); },
    }));
  }

  /** A step of the start, bounded, so that a start that hangs says where. */
  private async step<T>(what: string, work: Promise<T>, ms = 60_000): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`${this.name}: ${what} took longer than ${ms} ms`)), ms); });
    try {
      return await Promise.race([work, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  async stop(): Promise<void> {
    await this.eventsReader?.disconnect();
    await this.service?.stop();
    await dropDatabaseOf(this.databaseUrl());
  }

  /** Adds funds through openbank (a pay-in), with a statement scenario if named, and waits until the ledger has settled it. */
  async settledPayIn(amount: string, scenario?: string | null, currency = 'USD'): Promise<SettledPayIn> {
    const base = this.service.baseUrl;
    const created = await call(base, 'POST', '/v1/payments/add-funds', { customer_id: this.customerId, partner: 'openbank', amount, currency },
      { token: this.owner.key, idempotencyKey: randomUUID(), headers: scenario ? { 'Sandbox-Scenario': scenario } : {} });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    return eventually(async () => {
      const now = await call(base, 'GET', `/v1/payments/${created.body.id}`, undefined, { token: this.owner.key });
      return now.body.status === 'completed' ? now.body : undefined;
    }, 20_000, 'the pay-in settles');
  }

  /**
   * An ambiguous exception as README's "An ambiguous line" has it: two pay-ins of `amount` that
   * the partner's statement leaves out, each `ledger_only` after a run of today, and an uploaded
   * line of that amount without reference that fits both. The line is valued tomorrow and the
   * upload covers tomorrow alone: an upload is the whole statement of the days it covers, so one
   * covering today would report each of today's other movements alone too.
   */
  async ambiguousLine(amount: string): Promise<AmbiguousLine> {
    const base = this.service.baseUrl;
    const master = this.service.config.masterKey;
    const reconcile = async (body: Record<string, unknown>) => {
      const report = await call(base, 'POST', '/v1/reconciliations', { partner: 'openbank', ...body }, { token: master, idempotencyKey: randomUUID() });
      assert.equal(report.status, 201, JSON.stringify(report.body));
      return report.body;
    };
    const openOf = async (category: string): Promise<Array<{ id: string; reference: string | null; ledger_entry_id: string | null; statement_line_id: string | null; candidates: Array<{ ledger_entry_id: string | null }> }>> =>
      (await call(base, 'GET', `/v1/reconciliation-exceptions?partner=openbank&status=open&category=${category}&limit=100`, undefined, { token: master })).body.data;

    const payIns = [await this.settledPayIn(amount, 'statement_missing'), await this.settledPayIn(amount, 'statement_missing')];
    await reconcile({ from: today(), to: today() });
    const alone = await openOf('ledger_only');
    const candidates = payIns.map((payIn) => {
      const own = alone.find((e) => e.reference === payIn.external_id);
      assert.ok(own?.ledger_entry_id, `the pay-in ${payIn.external_id} is reported alone: ${JSON.stringify(alone)}`);
      return { ...payIn, ledgerEntryId: own.ledger_entry_id, exceptionId: own.id };
    }) as [Candidate, Candidate];

    const tomorrow = daysAfter(today(), 1);
    const upload = await reconcile({ from: tomorrow, to: tomorrow, statement_csv: `id,reference,amount,currency,value_date\nno-reference,,${amount},USD,${tomorrow}\n` });
    const line = upload.items.find((item: { category: string }) => item.category === 'ambiguous');
    assert.ok(line, `the line is ambiguous: ${JSON.stringify(upload.items)}`);
    const ambiguous = (await openOf('ambiguous')).find((e) => e.statement_line_id === line.statement_line_id);
    assert.ok(ambiguous, 'the ambiguous line is an open exception');
    assert.deepEqual(ambiguous.candidates.map((c) => c.ledger_entry_id).sort(), candidates.map((c) => c.ledgerEntryId).sort(), 'both pay-ins are its candidates');
    return { exceptionId: ambiguous.id, statementLineId: line.statement_line_id, candidates };
  }

  private databaseUrl(): string {
    return `${process.env.DATABASE_URL}_${this.name}`;
  }
}
