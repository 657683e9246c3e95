// The partner dispatcher: partner.commands → partner API (HTTP + OAuth 2.0) → ledger.commands
// (DESIGN.md section 3). Each transfer.execute instruction is submitted to its partner under the
// transfer id as reference, so a redelivered instruction finds the payment it already made
// instead of paying twice; the result goes to the ledger under the command id
// `partner_result:<transfer_id>`, so the ledger drops a repeated result. A transfer.return
// instruction is carried the same way under its reversal's id (returns.ts). An instruction whose
// partner has no final word yet goes back to partner.commands with its attempt counted.
//
// Every output of a batch is sent (src/kafka/send-batches.ts) before the handler resolves, and the
// consumer runner commits offsets only after that: at-least-once, made exactly-once in effect by
// the two ids above.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Message, Producer, TopicMessages } from 'kafkajs';
import { partnerEnvelope, type LedgerCommandEnvelope, type PartnerCommandEnvelope, type PartnerInstruction, type TransferExecute, type TransferReturn } from '../../ledger/messages';
import type { TransferPartnerResult } from '../../ledger/commands/transfer-partner-result';
import { PoisonMessageError, type Delivered } from '../../src/kafka/consumer';
import type { AvroCodec } from '../../src/kafka/registry';
import { sendBatches } from '../../src/kafka/send-batches';
import { TOPICS, type TopicNames } from '../../src/kafka/topics';
import { PARTNER_SLUGS } from '../../src/partners/registry';
import { PartnerClient } from '../../src/partners/client';
import { isSandboxScenario } from '../../src/partners/scenarios';
import { log } from '../../src/log';
import { claimInstruction, transferState, type TransferState } from './claims';
import { carry, follow, lookUp, outputOf, type CarryDeps, type Output } from './follow';
import { ATTEMPTS_MAX, decidePartnerOutcome } from './outcome';
import { executeReturn, parseReturn } from './returns';
import { wallNow, wallNowMs } from '../../src/clock';

/** Longest one poll of a pending payment runs before the instruction is re-queued. */
export const POLL_MS_MAX_DEFAULT = 5_000;
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

export interface PartnerDispatcherDeps extends CarryDeps {
  producer: Producer;
  codec: AvroCodec;
  names: TopicNames;
  concurrencyMax: number;
  batchMsMax: number;
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

type Instruction = { envelope: PartnerCommandEnvelope } & ({ type: 'transfer.execute'; command: TransferExecute } | { type: 'transfer.return'; command: TransferReturn });

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
  if (envelope.type !== 'transfer.execute' && envelope.type !== 'transfer.return') throw new PoisonMessageError(`${where}: unknown type "${envelope.type}"`);
  let payload: unknown;
  try {
    payload = JSON.parse(envelope.payload);
  } catch {
    throw new PoisonMessageError(`${where}: payload is not JSON`);
  }
  if (envelope.type === 'transfer.return') return { envelope, type: 'transfer.return', command: parseReturn(where, payload) };
  if (!isRecord(payload)
    || typeof payload.transfer_id !== 'string' || payload.transfer_id === ''
    || typeof payload.amount !== 'string'
    || typeof payload.currency !== 'string'
    || !isRecord(payload.beneficiary)
    || !Number.isInteger(payload.attempt) || (payload.attempt as number) < 0) {
    throw new PoisonMessageError(`${where}: payload is not a transfer.execute (transfer_id, amount, currency, beneficiary, attempt)`);
  }
  return { envelope, type: 'transfer.execute', command: payload as unknown as TransferExecute };
}

/**
 * An instruction of a transfer the ledger has finished. One we failed ourselves may still have
 * been paid by the partner (an answer that came too late): its `completed` goes to the ledger,
 * which completes the transfer again through its entries. Anything else is left as it is.
 */
async function afterFinish(deps: PartnerDispatcherDeps, client: PartnerClient, envelope: PartnerCommandEnvelope, command: TransferExecute, state: TransferState): Promise<Output> {
  if (state.status !== 'failed') return { kind: 'none' };
  const found = await lookUp(client, command);
  if (!('payment' in found) || found.payment === null) return { kind: 'none' };
  const decision = await follow(client, command, found.payment, deps.pollMsMax);
  // Only a completion changes a failed transfer; a copy that finds a pending payment is not a chain of its own.
  if (decision.kind === 'result' && decision.result.outcome === 'completed') return { kind: 'result', command: resultCommand(envelope.account_id, decision.result) };
  return { kind: 'none' };
}

/**
 * Carries one instruction as far as the partner allows now. It runs once per transfer state: a
 * stale copy finds a newer claim (claims.ts), and a transfer the ledger has finished is not
 * submitted again. Before it submits, and before it fails a transfer, it asks the partner what it
 * holds under the transfer's reference: the partner's truth decides (follow.ts carry).
 * @throws on a bug (outcome.ts).
 */
async function execute(deps: PartnerDispatcherDeps, envelope: PartnerCommandEnvelope, command: TransferExecute, source: string): Promise<Output> {
  const toLedger = (result: TransferPartnerResult) => resultCommand(envelope.account_id, result);
  const client = deps.clients.get(envelope.partner);
  if (client === undefined) return outputOf(decidePartnerOutcome(command, { kind: 'unknown_partner', partner: envelope.partner }), command.attempt, toLedger);
  // A finished transfer is never submitted again, only asked about (afterFinish), whatever the
  // copy. A ledger without the transfer (a database of its own) cannot say: the instruction runs.
  const state = await transferState(deps.db, command.transfer_id);
  if (state !== null && state.status !== 'executing') return afterFinish(deps, client, envelope, command, state);
  if (!(await claimInstruction(deps.db, command.transfer_id, command.attempt, source))) {
    log.info({ transferId: command.transfer_id, attempt: command.attempt }, 'a stale transfer instruction was dropped: a newer one has run');
    return { kind: 'none' };
  }
  // Past the first re-queues the partner has been failing for a while: give it a moment.
  if (command.attempt > ATTEMPTS_MAX) await sleep(deps.requeuePauseMs);
  const decision = await carry(client, command, deps.pollMsMax, () => client.submitPayment({
    reference: command.transfer_id,
    amount: command.amount,
    currency: command.currency,
    beneficiary: command.beneficiary,
    metadata: { transfer_id: command.transfer_id },
    ...(isSandboxScenario(command.scenario) ? { scenario: command.scenario } : {}),
  }));
  return outputOf(decision, command.attempt, toLedger);
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

function requeuedCommand(instruction: Instruction, attempt: number): PartnerCommandEnvelope {
  const { envelope } = instruction;
  const again = { type: instruction.type, payload: { ...instruction.command, attempt } } as PartnerInstruction;
  return partnerEnvelope(envelope.partner, envelope.account_id, again, new Date(envelope.issued_at));
}

async function encodeOutputs(deps: PartnerDispatcherDeps, instructions: Instruction[], outputs: Output[]): Promise<TopicMessages[]> {
  const ledger: Message[] = [];
  const partner: Message[] = [];
  for (let i = 0; i < instructions.length; i += 1) {
    const output = outputs[i];
    const { envelope } = instructions[i];
    if (output.kind === 'none') continue;
    if (output.kind === 'result') {
      ledger.push({ key: envelope.account_id, value: await deps.codec.encode(TOPICS.ledgerCommands, output.command) });
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
    const source = `${messages[index].partition}:${messages[index].offset}`;
    if (wallNowMs() >= budgetEndsMs) outputs[index] = { kind: 'requeue', attempt: instruction.command.attempt };
    else if (instruction.type === 'transfer.return') outputs[index] = await executeReturn(deps, instruction.envelope, instruction.command, source);
    else outputs[index] = await execute(deps, instruction.envelope, instruction.command, source);
  });
  const topicMessages = await encodeOutputs(deps, instructions, outputs);
  await sendBatches(deps.producer, topicMessages);
}
