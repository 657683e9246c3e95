// The partner dispatcher: partner.commands → partner API (HTTP + OAuth 2.0) → ledger.commands
// (DESIGN.md section 3). Each transfer.execute instruction is submitted to its partner under the
// transfer id as reference, so a redelivered instruction finds the payment it already made
// instead of paying twice; the result goes to the ledger under the command id
// `partner_result:<transfer_id>`, so the ledger drops a repeated result. An instruction whose
// partner has no final word yet goes back to partner.commands with its attempt counted.
//
// Every output of a batch is sent (src/kafka/send-batches.ts) before the handler resolves, and the
// consumer runner commits offsets only after that: at-least-once, made exactly-once in effect by
// the two ids above.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Knex } from 'knex';
import type { Message, Producer, TopicMessages } from 'kafkajs';
import type { LedgerCommandEnvelope, PartnerCommandEnvelope, TransferExecute, TransferPartnerResult } from '../../ledger/messages';
import { PoisonMessageError, type Delivered } from '../../src/kafka/consumer';
import type { AvroCodec } from '../../src/kafka/registry';
import { sendBatches } from '../../src/kafka/send-batches';
import { TOPICS, type TopicNames } from '../../src/kafka/topics';
import { PARTNER_SLUGS } from '../../src/partners/registry';
import { PartnerClient, type PartnerPayment } from '../../src/partners/client';
import { isPartnerError } from '../../src/partners/errors';
import { isSandboxScenario } from '../../src/partners/scenarios';
import { log } from '../../src/log';
import { claimInstruction, transferState, type TransferState } from './claims';
import { ATTEMPTS_MAX, decidePartnerOutcome, type PartnerDecision } from './outcome';
import { wallNow, wallNowMs } from '../../src/clock';

/** Longest one poll of a pending payment runs before the instruction is re-queued. */
export const POLL_MS_MAX_DEFAULT = 5_000;
/** Poll backoff: 25, 50, 100, 200, 400, 500, 500... ms between looks at a pending payment. */
export const POLL_BACKOFF_MS_INITIAL = 25;
export const POLL_BACKOFF_MS_MAX = 500;
/** Instructions of one batch in flight at once. */
export const CONCURRENCY_MAX_DEFAULT = 64;
/**
 * Budget of one batch: instructions not yet started when it is spent are re-queued as they are
 * (attempt unchanged), so one large batch cannot hold the consumer past its session timeout
 * (kafkajs heartbeats only between batches; default sessionTimeout 30 s).
 */
export const BATCH_MS_MAX_DEFAULT = 10_000;
export const REQUEUE_PAUSE_MS_DEFAULT = 1_000;
/**
 * Bounds of one partner call. With 4 attempts of at most 2 s each plus backoff, one call ends
 * within about 10 s; 4 attempts ride out the sandbox outage (2 failed submits, scenario outage).
 */
export const PARTNER_CALL_TIMEOUT_MS = 2_000;
export const PARTNER_CALL_ATTEMPTS_MAX = 4;
export const PARTNER_CALL_BACKOFF_MS_MAX = 1_000;

export interface PartnerDispatcherDeps {
  db: Knex;
  producer: Producer;
  codec: AvroCodec;
  names: TopicNames;
  /** One client per partner slug, created once (createPartnerClients). */
  clients: ReadonlyMap<string, PartnerClient>;
  pollMsMax: number;
  concurrencyMax: number;
  batchMsMax: number;
  /** The wait before an attempt past ATTEMPTS_MAX, so a partner down for minutes is not asked in a tight loop. */
  requeuePauseMs: number;
}

/** The bounds of one partner call: its timeout, its attempts and the longest wait between them. */
export interface PartnerCallBounds { timeoutMs: number; attemptsMax: number; backoffMsMax: number }
export const PARTNER_CALL_BOUNDS: PartnerCallBounds = { timeoutMs: PARTNER_CALL_TIMEOUT_MS, attemptsMax: PARTNER_CALL_ATTEMPTS_MAX, backoffMsMax: PARTNER_CALL_BACKOFF_MS_MAX };

export interface PartnerClientsOptions {
  /** The rails' base address; partner `<slug>` lives at `${railsUrl}/<slug>`. */
  railsUrl: string;
  clientId: string;
  clientSecret: string;
  /** PARTNER_CALL_BOUNDS unless a test shortens them. */
  calls?: PartnerCallBounds;
}

/** One PartnerClient per partner slug, each with its own token. */
export function createPartnerClients(options: PartnerClientsOptions): Map<string, PartnerClient> {
  const railsUrl = options.railsUrl.replace(/\/+$/, '');
  return new Map(PARTNER_SLUGS.map((slug) => [slug, new PartnerClient({
    baseUrl: `${railsUrl}/${slug}`,
    clientId: options.clientId,
    clientSecret: options.clientSecret,
    ...(options.calls ?? PARTNER_CALL_BOUNDS),
  })]));
}

interface Instruction {
  envelope: PartnerCommandEnvelope;
  command: TransferExecute;
}

/** What one instruction sends on: a result to the ledger, itself back with this attempt, or nothing (stale, or finished). */
type Output = { kind: 'result'; result: TransferPartnerResult } | { kind: 'requeue'; attempt: number } | { kind: 'none' };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The instruction in a delivered partner command. A command that breaks the contract of
 * ledger/messages.ts was produced by a bug: it goes to the dead-letter topic.
 * @throws PoisonMessageError
 */
export function parseInstruction(envelope: PartnerCommandEnvelope): Instruction {
  const where = `partner command ${envelope.id}`;
  if (envelope.type !== 'transfer.execute') throw new PoisonMessageError(`${where}: unknown type "${envelope.type}"`);
  let payload: unknown;
  try {
    payload = JSON.parse(envelope.payload);
  } catch {
    throw new PoisonMessageError(`${where}: payload is not JSON`);
  }
  if (!isRecord(payload)
    || typeof payload.transfer_id !== 'string' || payload.transfer_id === ''
    || typeof payload.amount !== 'string'
    || typeof payload.currency !== 'string'
    || !isRecord(payload.beneficiary)
    || !Number.isInteger(payload.attempt) || (payload.attempt as number) < 0) {
    throw new PoisonMessageError(`${where}: payload is not a transfer.execute (transfer_id, amount, currency, beneficiary, attempt)`);
  }
  return { envelope, command: payload as unknown as TransferExecute };
}

/** One call to the partner, its answer (or failure) turned into the next step. */
async function ask(command: TransferExecute, paymentId: string | null, call: () => Promise<PartnerPayment>): Promise<PartnerDecision> {
  try {
    return decidePartnerOutcome(command, { kind: 'payment', payment: await call() });
  } catch (error) {
    return decidePartnerOutcome(command, { kind: 'error', error, paymentId });
  }
}

/** Looks at a pending payment with a bounded backoff until it is final or pollMsMax elapses. */
async function poll(client: PartnerClient, command: TransferExecute, paymentId: string, pollMsMax: number): Promise<PartnerDecision> {
  const deadlineMs = wallNowMs() + pollMsMax;
  for (let backoffMs = POLL_BACKOFF_MS_INITIAL; ; backoffMs = Math.min(POLL_BACKOFF_MS_MAX, backoffMs * 2)) {
    const waitMs = Math.min(backoffMs, deadlineMs - wallNowMs());
    if (waitMs <= 0) return decidePartnerOutcome(command, { kind: 'poll_timeout', paymentId });
    await sleep(waitMs);
    const decision = await ask(command, paymentId, () => client.getPayment(paymentId));
    if (decision.kind !== 'poll') return decision;
  }
}

/** What the partner holds under the transfer's reference, as a decision; an unreachable partner: requeue. */
async function lookUp(client: PartnerClient, command: TransferExecute): Promise<{ payment: PartnerPayment | null } | { unreachable: PartnerDecision }> {
  try {
    return { payment: await client.findPaymentByReference(command.transfer_id) };
  } catch (error) {
    if (!isPartnerError(error)) throw error;
    // A partner that cannot be asked (or answers what we cannot read) confirms nothing: ask again on the next attempt.
    return { unreachable: { kind: 'requeue' } };
  }
}

/** Follows a payment the partner holds: its final status, or a requeue while it is not final. */
async function follow(deps: PartnerDispatcherDeps, client: PartnerClient, command: TransferExecute, payment: PartnerPayment): Promise<PartnerDecision> {
  const decision = decidePartnerOutcome(command, { kind: 'payment', payment });
  return decision.kind === 'poll' ? poll(client, command, decision.paymentId, deps.pollMsMax) : decision;
}

/**
 * An instruction of a transfer the ledger has finished. One we failed ourselves may still have
 * been paid by the partner (an answer that came too late): its `completed` goes to the ledger,
 * which completes the transfer again through its entries. Anything else is left as it is.
 */
async function afterFinish(deps: PartnerDispatcherDeps, client: PartnerClient, command: TransferExecute, state: TransferState): Promise<Output> {
  if (state.status !== 'failed') return { kind: 'none' };
  const found = await lookUp(client, command);
  if (!('payment' in found) || found.payment === null) return { kind: 'none' };
  const decision = await follow(deps, client, command, found.payment);
  // Only a completion changes a failed transfer; a copy that finds a pending payment is not a chain of its own.
  if (decision.kind === 'result' && decision.result.outcome === 'completed') return { kind: 'result', result: decision.result };
  return { kind: 'none' };
}

/**
 * Carries one instruction as far as the partner allows now. It runs once per transfer state: a
 * stale copy finds a newer claim (claims.ts), and a transfer the ledger has finished is not
 * submitted again. Before it submits, and before it fails a transfer, it asks the partner what it
 * holds under the transfer's reference: the partner's truth decides.
 * @throws on a bug (outcome.ts).
 */
async function execute(deps: PartnerDispatcherDeps, { envelope, command }: Instruction, source: string): Promise<Output> {
  const client = deps.clients.get(envelope.partner);
  if (client === undefined) {
    const decision = decidePartnerOutcome(command, { kind: 'unknown_partner', partner: envelope.partner });
    return decision.kind === 'result' ? { kind: 'result', result: decision.result } : { kind: 'none' };
  }
  // A finished transfer is never submitted again, only asked about (afterFinish), whatever the
  // copy. A ledger without the transfer (a database of its own) cannot say: the instruction runs.
  const state = await transferState(deps.db, command.transfer_id);
  if (state !== null && state.status !== 'executing') return afterFinish(deps, client, command, state);
  if (!(await claimInstruction(deps.db, command.transfer_id, command.attempt, source))) {
    log.info({ transferId: command.transfer_id, attempt: command.attempt }, 'a stale transfer instruction was dropped: a newer one has run');
    return { kind: 'none' };
  }
  // Past the first re-queues the partner has been failing for a while: give it a moment.
  if (command.attempt > ATTEMPTS_MAX) await sleep(deps.requeuePauseMs);
  const found = await lookUp(client, command);
  let decision: PartnerDecision;
  if (!('payment' in found)) decision = found.unreachable;
  else if (found.payment !== null) decision = await follow(deps, client, command, found.payment);
  else {
    decision = await ask(command, null, () => client.submitPayment({
      reference: command.transfer_id,
      amount: command.amount,
      currency: command.currency,
      beneficiary: command.beneficiary,
      metadata: { transfer_id: command.transfer_id },
      ...(isSandboxScenario(command.scenario) ? { scenario: command.scenario } : {}),
    }));
    if (decision.kind === 'poll') decision = await poll(client, command, decision.paymentId, deps.pollMsMax);
  }
  if (decision.kind === 'confirm') {
    // Fail only on the partner's word that it holds no payment; if it holds one, follow it.
    const confirmed = await lookUp(client, command);
    if (!('payment' in confirmed)) decision = { kind: 'requeue' };
    else if (confirmed.payment !== null) decision = await follow(deps, client, command, confirmed.payment);
    else decision = { kind: 'result', result: decision.result };
  }
  switch (decision.kind) {
    case 'result':
      return { kind: 'result', result: decision.result };
    case 'requeue':
      return { kind: 'requeue', attempt: command.attempt + 1 };
    case 'poll':
    case 'confirm':
      throw new Error(`partner command ${envelope.id}: a ${decision.kind} decision outlived its step`);
  }
}

/**
 * Runs `work` on every item, at most `concurrencyMax` at once. After a failure no new item
 * starts; the first failure is raised once the running ones have settled.
 */
async function forEachBounded<T>(items: T[], concurrencyMax: number, work: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const failures: unknown[] = [];
  const worker = async (): Promise<void> => {
    while (next < items.length && failures.length === 0) {
      const index = next;
      next += 1;
      try {
        await work(items[index], index);
      } catch (error) {
        failures.push(error);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrencyMax, items.length) }, worker));
  if (failures.length > 0) throw failures[0];
}

/** The ledger command id of a result: one per transfer and outcome, so a late `completed` is not taken for a repeated `failed`. */
export function resultCommandId(result: TransferPartnerResult): string {
  return `partner_result:${result.transfer_id}:${result.outcome}`;
}

export function resultCommand(accountId: string, result: TransferPartnerResult): LedgerCommandEnvelope {
  return {
    // Stable per transfer and outcome: whatever path produced it, a second one is a duplicate to the ledger.
    id: resultCommandId(result),
    type: 'transfer.partner_result',
    account_id: accountId,
    reply_to: null,
    issued_at: wallNow().toISOString(),
    payload: JSON.stringify(result),
  };
}

function requeuedCommand({ envelope, command }: Instruction, attempt: number): PartnerCommandEnvelope {
  return { ...envelope, id: `execute:${command.transfer_id}:${attempt}`, payload: JSON.stringify({ ...command, attempt }) };
}

async function encodeOutputs(deps: PartnerDispatcherDeps, instructions: Instruction[], outputs: Output[]): Promise<TopicMessages[]> {
  const ledger: Message[] = [];
  const partner: Message[] = [];
  for (let i = 0; i < instructions.length; i += 1) {
    const output = outputs[i];
    const { envelope } = instructions[i];
    if (output.kind === 'none') continue;
    if (output.kind === 'result') {
      ledger.push({ key: envelope.account_id, value: await deps.codec.encode(TOPICS.ledgerCommands, resultCommand(envelope.account_id, output.result)) });
    } else {
      partner.push({ key: envelope.resource_id, value: await deps.codec.encode(TOPICS.partnerCommands, requeuedCommand(instructions[i], output.attempt)) });
    }
  }
  const topicMessages: TopicMessages[] = [];
  if (ledger.length > 0) topicMessages.push({ topic: deps.names.full(TOPICS.ledgerCommands), messages: ledger });
  if (partner.length > 0) topicMessages.push({ topic: deps.names.full(TOPICS.partnerCommands), messages: partner });
  return topicMessages;
}

/**
 * Executes a batch of partner commands and sends every result and re-queued instruction in
 * requests of bounded size (acks -1) before resolving.
 * @throws PoisonMessageError for a command that is not a valid transfer.execute; any other
 * non-partner error from the calls (a bug). Either way nothing of the batch is sent, and the
 * runner re-applies its messages one by one, dead-lettering the bad one.
 */
export async function handlePartnerBatch(deps: PartnerDispatcherDeps, messages: Delivered<PartnerCommandEnvelope>[]): Promise<void> {
  const budgetEndsMs = wallNowMs() + deps.batchMsMax;
  // Every command is parsed before any claims its transfer: a bad one fails the batch untouched.
  const instructions = messages.map((message) => parseInstruction(message.value));
  const outputs: Output[] = new Array(instructions.length);
  await forEachBounded(instructions, deps.concurrencyMax, async (instruction, index) => {
    outputs[index] = wallNowMs() < budgetEndsMs
      ? await execute(deps, instruction, `${messages[index].partition}:${messages[index].offset}`)
      : { kind: 'requeue', attempt: instruction.command.attempt };
  });
  const topicMessages = await encodeOutputs(deps, instructions, outputs);
  await sendBatches(deps.producer, topicMessages);
}
