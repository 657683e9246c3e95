// The partner dispatcher end to end: partner commands (Avro, real broker and registry) in, calls
// to the mock rails over HTTP + OAuth 2.0, partner results out on ledger.commands. The test has
// a runtime and topics of its own (prefix "<test prefix>dispatch."), so the service started by
// the root hooks never sees these commands.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Consumer } from 'kafkajs';
import { createPartnerClients, handlePartnerBatch, PARTNER_CALL_BOUNDS } from '../../consumers/partners/dispatcher';
import { startPartnerDispatcher } from '../../consumers/partners/runner';
import { ATTEMPTS_MAX, UNEXPECTED_CHECKS_MAX } from '../../consumers/partners/outcome';
import type { LedgerCommandEnvelope, PartnerCommandEnvelope, TransferExecute } from '../../ledger/messages';
import type { TransferPartnerResult } from '../../ledger/commands/transfer-partner-result';
import type { Currency } from '../../ledger/money';
import { loadConfig, type Config } from '../../src/config';
import { createKafka } from '../../src/kafka/client';
import { deadLetterTopic, ensureTopics, TopicNames, TOPICS } from '../../src/kafka/topics';
import { ownRailsBooks } from '../support/service';
import { startMockRails, type MockRails } from '../../src/mock-rails/server';
import { PartnerClient } from '../../src/partners/client';
import { openRuntime, type RunningRole, type Runtime } from '../../src/runtime';
import { eventually } from '../support/http';
import { controlHeaders, controlSecret } from '../support/secrets';

/** Long enough for a chain confirmation (CHAIN_CONFIRM_MS, 150 ms by default), short for tests. */
const POLL_MS_MAX = 1_000;
const WAIT_MS_MAX = 20_000;

interface ResultCommand {
  key: string | null;
  envelope: LedgerCommandEnvelope;
  result: TransferPartnerResult;
}

interface RailStats { token_requests: number; submit_attempts: number; rejected_tokens: number }

/**
 * Creates this test's topics and waits until every partition has a leader; with the topics in
 * place, openRuntime creates none.
 */
async function createSettledTopics(config: Config): Promise<void> {
  const admin = createKafka(config.kafkaBrokers, 'test-partner-dispatcher-setup').admin();
  await admin.connect();
  try {
    await ensureTopics(admin, new TopicNames(config.kafkaTopicPrefix).all(), config.kafkaPartitions);
  } finally {
    await admin.disconnect();
  }
}

describe('partner dispatcher on the real broker, registry and mock rails', () => {
  let runtime: Runtime;
  let rails: MockRails;
  let dispatcher: RunningRole;
  let reader: Consumer;
  const results: ResultCommand[] = [];
  const partnerCommands: PartnerCommandEnvelope[] = [];
  const deadLetters: Array<{ key: string | null; reason: string }> = [];
  const accountId = randomUUID();

  before(async function () {
    this.timeout(90_000);
    const config = loadConfig({ ...process.env, KAFKA_TOPIC_PREFIX: `${process.env.KAFKA_TOPIC_PREFIX ?? 'test.'}dispatch.`, MOCK_RAILS_PORT: '0' });
    await createSettledTopics(config);
    runtime = await openRuntime(config);
    rails = await startMockRails({
      ...ownRailsBooks(), host: config.host, port: 0, tokenTtlSeconds: config.partnerTokenTtlSeconds,
      clientId: config.partnerClientId, clientSecret: config.partnerClientSecret, controlSecret: controlSecret(),
      redirectUris: [`http://${config.host}:${config.port}/v1/partners/oauth/callback`], chainConfirmMs: config.chainConfirmMs,
    });
    // The waits of a partner that is down are short here, so an outage outlasts ATTEMPTS_MAX
    // attempts within seconds; each call's timeout and attempts are the service's own.
    dispatcher = await startPartnerDispatcher(runtime, {
      railsUrl: rails.url, pollMsMax: POLL_MS_MAX, requeuePauseMs: 50, partnerCalls: { ...PARTNER_CALL_BOUNDS, backoffMsMax: 20 },
    });

    const { names } = runtime;
    const ledgerTopic = names.full(TOPICS.ledgerCommands);
    const partnerTopic = names.full(TOPICS.partnerCommands);
    const dlqTopic = names.full(deadLetterTopic(TOPICS.partnerCommands));
    reader = runtime.kafka.consumer({ groupId: `${names.prefix}reader.${randomUUID()}`, maxWaitTimeInMs: 50 });
    await reader.connect();
    await reader.subscribe({ topics: [ledgerTopic, partnerTopic, dlqTopic], fromBeginning: true });
    await reader.run({
      eachMessage: async ({ topic, message }) => {
        const key = message.key?.toString() ?? null;
        if (topic === dlqTopic) {
          deadLetters.push({ key, reason: message.headers?.['dlq-reason']?.toString() ?? '' });
        } else if (topic === ledgerTopic) {
          const envelope = await runtime.codec.decode<LedgerCommandEnvelope>(message.value!);
          results.push({ key, envelope, result: JSON.parse(envelope.payload) as TransferPartnerResult });
        } else {
          // Every instruction on partner.commands, ours and the dispatcher's re-queues alike.
          partnerCommands.push(await runtime.codec.decode<PartnerCommandEnvelope>(message.value!));
        }
      },
    });
  });

  after(async function () {
    this.timeout(60_000);
    await reader?.disconnect();
    await dispatcher?.stop();
    await rails?.stop();
    await runtime?.close();
  });

  function partnerCommand(partner: string, amount: string, currency: Currency, attempt = 0, scenario: string | null = null): PartnerCommandEnvelope {
    const transferId = randomUUID();
    const payload: TransferExecute = {
      transfer_id: transferId, amount, currency, attempt, scenario,
      beneficiary: { name: 'Ada Lovelace', email: 'ada@example.com' },
    };
    return {
      id: `execute:${transferId}:${attempt}`, type: 'transfer.execute', partner, resource_id: transferId,
      account_id: accountId, issued_at: new Date().toISOString(), payload: JSON.stringify(payload),
    };
  }

  async function produce(envelope: PartnerCommandEnvelope): Promise<string> {
    await runtime.producer.send({
      topic: runtime.names.full(TOPICS.partnerCommands),
      acks: -1,
      messages: [{ key: envelope.resource_id, value: await runtime.codec.encode(TOPICS.partnerCommands, envelope) }],
    });
    return envelope.resource_id;
  }

  function resultsFor(transferId: string): ResultCommand[] {
    return results.filter((r) => r.result.transfer_id === transferId);
  }

  /** The one result command of a transfer, checked for the envelope every result carries. */
  async function resultOf(transferId: string): Promise<TransferPartnerResult> {
    const [got] = await eventually(async () => {
      const found = resultsFor(transferId);
      return found.length > 0 ? found : undefined;
    }, WAIT_MS_MAX, `the partner result of ${transferId}`);
    assert.equal(got.key, accountId, 'keyed by the account');
    assert.equal(got.envelope.id, `partner_result:${transferId}:${got.result.outcome}`);
    assert.equal(got.envelope.type, 'transfer.partner_result');
    assert.equal(got.envelope.account_id, accountId);
    assert.equal(got.envelope.reply_to, null);
    assert.ok(!Number.isNaN(Date.parse(got.envelope.issued_at)));
    return got.result;
  }

  async function railStats(slug: string): Promise<RailStats> {
    const response = await fetch(`${rails.url}/${slug}/_control/stats`, { headers: controlHeaders() });
    assert.equal(response.status, 200);
    return await response.json() as RailStats;
  }

  function railClient(slug: string): PartnerClient {
    const { config } = runtime;
    return new PartnerClient({ baseUrl: `${rails.url}/${slug}`, clientId: config.partnerClientId, clientSecret: config.partnerClientSecret });
  }

  it('fiat, normal amount: completed, with the partner payment id', async () => {
    const transferId = await produce(partnerCommand('fiat', '10.00', 'USD'));
    const result = await resultOf(transferId);
    assert.equal(result.outcome, 'completed');
    assert.match(result.partner_payment_id ?? '', /^fiat_/);
    assert.equal(result.failure_code, null);
    assert.equal(result.failure_message, null);
  });

  it('chain, normal amount: pending at submission, polled until the chain confirms, completed', async () => {
    const transferId = await produce(partnerCommand('chain', '25.000000', 'USDC'));
    const result = await resultOf(transferId);
    assert.equal(result.outcome, 'completed');
    assert.match(result.partner_payment_id ?? '', /^chain_/);
    const payment = await railClient('chain').getPayment(result.partner_payment_id!);
    assert.equal(payment.status, 'completed');
    assert.equal(payment.reference, transferId);
  });

  it('scenario outage: completed after the client\'s retries, 3 submits on the rail', async () => {
    const before = await railStats('fiat');
    const transferId = await produce(partnerCommand('fiat', '10.00', 'USD', 0, 'outage'));
    const result = await resultOf(transferId);
    assert.equal(result.outcome, 'completed');
    assert.match(result.partner_payment_id ?? '', /^fiat_/);
    const after = await railStats('fiat');
    assert.equal(after.submit_attempts - before.submit_attempts, 3, '2 answered 503, the 3rd succeeded');
  });

  it('scenario decline: failed partner_declined, no partner payment', async () => {
    const result = await resultOf(await produce(partnerCommand('fiat', '10.00', 'USD', 0, 'decline')));
    assert.deepEqual([result.outcome, result.failure_code, result.partner_payment_id], ['failed', 'partner_declined', null]);
    assert.match(result.failure_message ?? '', /declined/);
  });

  it('scenario lost_answer: the rail created the payment but answered 500; the resubmission finds it: completed', async () => {
    const before = await railStats('fiat');
    const result = await resultOf(await produce(partnerCommand('fiat', '10.00', 'USD', 0, 'lost_answer')));
    assert.deepEqual([result.outcome, result.failure_code], ['completed', null]);
    assert.match(result.partner_payment_id ?? '', /^fiat_/);
    const after = await railStats('fiat');
    assert.equal(after.submit_attempts - before.submit_attempts, 1, 'the submit whose answer was lost; the next attempt found the payment by its reference');
  });

  it('scenario reverse: rolled_back partner_reversed, with the partner payment id', async () => {
    const result = await resultOf(await produce(partnerCommand('fiat', '10.00', 'USD', 0, 'reverse')));
    assert.deepEqual([result.outcome, result.failure_code], ['rolled_back', 'partner_reversed']);
    assert.match(result.partner_payment_id ?? '', /^fiat_/);
  });

  it(`scenario error: failed partner_error only after ${UNEXPECTED_CHECKS_MAX} submissions under the same reference found no payment`, async () => {
    const before = await railStats('fiat');
    const result = await resultOf(await produce(partnerCommand('fiat', '10.00', 'USD', 0, 'error')));
    assert.deepEqual([result.outcome, result.failure_code, result.partner_payment_id], ['failed', 'partner_error', null]);
    assert.match(result.failure_message ?? '', new RegExp(`after ${UNEXPECTED_CHECKS_MAX} submissions the partner confirmed it holds no payment`));
    const after = await railStats('fiat');
    assert.equal(after.submit_attempts - before.submit_attempts, UNEXPECTED_CHECKS_MAX, 'one submission per check, each answered 500');
  });

  it('unknown partner slug: failed invalid_partner, not a crash', async () => {
    const result = await resultOf(await produce(partnerCommand('nowhere', '10.00', 'USD')));
    assert.deepEqual([result.outcome, result.failure_code, result.partner_payment_id], ['failed', 'invalid_partner', null]);
  });

  it('no final status within the poll: followed, re-queued with attempt + 1 past ATTEMPTS_MAX, never failed while the partner holds it', async () => {
    // Claimless payments stay pending until the payee opens the link.
    const transferId = await produce(partnerCommand('claimless', '10.00', 'USD', ATTEMPTS_MAX));
    const attemptOf = (envelope: PartnerCommandEnvelope) => (JSON.parse(envelope.payload) as TransferExecute).attempt;
    const again = await eventually(
      async () => partnerCommands.find((e) => e.resource_id === transferId && attemptOf(e) === ATTEMPTS_MAX + 2),
      WAIT_MS_MAX, 'two re-queues past ATTEMPTS_MAX',
    );
    assert.equal(again.id, `execute:${transferId}:${ATTEMPTS_MAX + 2}`, 'the same instruction, its attempt counted in its id');
    assert.equal(resultsFor(transferId).length, 0, 'no result while the partner holds a pending payment');
    const payment = await railClient('claimless').findPaymentByReference(transferId);
    assert.equal(payment?.status, 'pending');
    // The payee claims it: the chain ends with the result. (Left to run, each re-queue would poll
    // for POLL_MS_MAX in the partition's batch, holding up every later test's instruction.)
    const claimed = await fetch(`${rails.url}/claimless/claim/${payment!.id}`, { method: 'POST', body: new URLSearchParams({ decision: 'claim' }) });
    assert.equal(claimed.status, 200);
    assert.equal((await resultOf(transferId)).outcome, 'completed');
  });

  it('a stale copy of an instruction is dropped: one result, one submission', async () => {
    const command = partnerCommand('fiat', '42.00', 'EUR');
    const before = await railStats('fiat');
    const transferId = await produce(command);
    await resultOf(transferId);
    await produce(command);
    const later = partnerCommand('fiat', '43.00', 'EUR');
    assert.equal((await resultOf(await produce(later))).outcome, 'completed');
    assert.equal(resultsFor(transferId).length, 1, 'the copy ran nothing');
    const after = await railStats('fiat');
    assert.equal(after.submit_attempts - before.submit_attempts, 2, 'one submission for each transfer');
  });

  it('slow_answer: a partner that answers after our timeout made the payment on the first call: completed, never failed, paid once', async function () {
    this.timeout(60_000);
    const before = await railStats('fiat');
    const transferId = await produce(partnerCommand('fiat', '13.00', 'USD', 0, 'slow_answer'));
    const result = await eventually(async () => resultsFor(transferId)[0]?.result, 50_000, 'the result of the slow partner');
    assert.deepEqual([result.outcome, result.failure_code], ['completed', null]);
    assert.equal(resultsFor(transferId).length, 1);
    const payment = await railClient('fiat').findPaymentByReference(transferId);
    assert.equal(payment?.id, result.partner_payment_id, 'the payment made by the first call');
    const after = await railStats('fiat');
    assert.ok(after.submit_attempts - before.submit_attempts <= 4, 'one call of the client (its retries), then the payment was found by reference');
  });

  it('a partner down past ATTEMPTS_MAX attempts, and a stale copy of the instruction meanwhile: no failure, one chain, completed once the partner is back', async function () {
    this.timeout(90_000);
    const outage = (ms: number) => fetch(`${rails.url}/fiat/_control/outage?ms=${ms}`, { method: 'POST', headers: controlHeaders() });
    assert.equal((await outage(600_000)).status, 200);
    const command = partnerCommand('fiat', '14.00', 'USD');
    const transferId = await produce(command);
    const attemptsOf = () => partnerCommands.filter((e) => e.resource_id === transferId).map((e) => (JSON.parse(e.payload) as TransferExecute).attempt);
    await eventually(async () => (attemptsOf().includes(1) ? true : undefined), WAIT_MS_MAX, 'the first re-queue while the partner is down');
    await produce(command); // a copy, as an outbox round published twice delivers it
    // The partner stays down until the chain has gone past ATTEMPTS_MAX, where it only pauses between attempts.
    await eventually(async () => (attemptsOf().includes(ATTEMPTS_MAX + 2) ? true : undefined), 60_000, `attempt ${ATTEMPTS_MAX + 2} while the partner is down`);
    assert.equal(resultsFor(transferId).length, 0, 'no result while the partner might hold the payment');
    assert.equal((await outage(0)).status, 200);
    const result = await eventually(async () => resultsFor(transferId)[0]?.result, WAIT_MS_MAX, 'the result once the partner is back');
    assert.deepEqual([result.outcome, result.failure_code], ['completed', null], 'never failed while the partner might hold the payment');
    // The copy was read long before the partner came back (same partition, in order): had it
    // started a second chain, an attempt number would have been queued twice.
    const attempts = attemptsOf();
    assert.deepEqual(attempts.filter((a) => a > 0), [...new Set(attempts.filter((a) => a > 0))], `one chain of attempts: ${attempts.join(',')}`);
    assert.equal(resultsFor(transferId).length, 1, 'one result');
  });

  it('a malformed command goes to the dead-letter topic; the ones after it still get results', async () => {
    const broken = { ...partnerCommand('fiat', '10.00', 'USD'), payload: '{not json' };
    await produce(broken);
    const transferId = await produce(partnerCommand('fiat', '11.00', 'USD'));
    assert.equal((await resultOf(transferId)).outcome, 'completed');
    const dead = await eventually(async () => deadLetters.find((d) => d.key === broken.resource_id), WAIT_MS_MAX, 'the dead letter');
    assert.match(dead.reason, /payload is not JSON/);
    assert.equal(resultsFor(broken.resource_id).length, 0);
  });
  it('a batch past its time budget re-queues what it has not started, attempt unchanged', async () => {
    // Called directly with a spent budget (batchMsMax 0); the running dispatcher then takes the
    // re-queued instruction like any other.
    const { config } = runtime;
    const deps = {
      db: runtime.db, requeuePauseMs: 1_000,
      producer: runtime.producer, codec: runtime.codec, names: runtime.names,
      clients: createPartnerClients({ railsUrl: rails.url, clientId: config.partnerClientId, clientSecret: config.partnerClientSecret }),
      pollMsMax: POLL_MS_MAX, concurrencyMax: 64, batchMsMax: 0,
    };
    const envelope = partnerCommand('fiat', '12.00', 'USD');
    await handlePartnerBatch(deps, [{ key: envelope.resource_id, value: envelope, partition: 0, offset: '0', timestamp: String(Date.now()) }]);
    const deferred = await eventually(async () => partnerCommands.find((e) => e.resource_id === envelope.resource_id), WAIT_MS_MAX, 'the deferred instruction');
    assert.deepEqual({ ...deferred }, envelope, 'the same instruction, attempt 0');
    assert.equal((await resultOf(envelope.resource_id)).outcome, 'completed');
  });
});
