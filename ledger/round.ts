// A round of the ledger, in one transaction of its store (ports.ts; Postgres in ledger/store/),
// and the guarantee it gives, step by step (decideRound): gather (lock the records its commands
// name and read its facts after them, once); lock the ledger accounts the commands post to; decide
// each command in order by its module (ledger/commands), each on the balances and records the ones
// before it left; apply each decision to the round's write (round-changes.ts); check what only a bug
// could break (invariants.ts); write everything at once (entries, balances, records, processed
// commands and the outbox round). A command decided before is not decided again: its answer is the
// stored one. The consumer (consumers/ledger) reads Kafka, calls this, and answers and publishes
// once it committed; how an outbox row is shaped for Kafka is its business (OutboxRows).
import { randomUUID } from 'node:crypto';
import { BalanceBook } from './balances';
import { held, type LedgerAccountRef } from './chart';
import { wallNow } from './clock';
import { needsOf, type BatchFacts, type ParsedCommand } from './commands';
import { emptyDecision, type Decision } from './decision';
import { assertRoundWritable } from './invariants';
import { shown } from './outcome';
import type { BatchWrite, CommandRef, KnownCommand, LedgerStore, Locked, RoundTransaction } from './ports';
import { RoundChanges, type OutboxRows } from './round-changes';
import { isCanonicalUuid, unstorable } from './screen';

export type { OutboxRows };

export interface RoundSettings {
  rows: OutboxRows;
  /** Told each new hold's expiry once its round committed (the hold expiry's next sweep). */
  holdsDue?: (expiresAt: Date) => void;
  /** The server's bound on each statement of a round (store/round-transaction.ts); none: the default. Tests shorten it. */
  statementTimeoutMs?: number;
}

export interface RoundOutcome {
  /** What the store knew of each command as the round began: decided before, or its key held by the API. */
  known: Map<string, KnownCommand>;
  /** Each command decided in this round: its outcome JSON text, by command id. */
  outcomes: Map<string, string>;
  /** The round's outbox, when it wrote one: none when every command was decided before. */
  written: { roundId: string; outbox: BatchWrite['outbox'] } | null;
}

/** Ledger accounts a round posts to that do not exist yet: made outside the round, which then runs again. */
class AccountsMissing extends Error {
  constructor(readonly refs: LedgerAccountRef[]) {
    super(`ledger accounts missing: ${refs.map((r) => r.code).join(', ')}`);
  }
}

/**
 * Decides and writes a round of `commands` (each decided once, whatever the batch repeats);
 * `publishedRounds` are marked published in its transaction. A ledger account the round needs that
 * does not exist yet is made outside its transaction (a lock held while inserting could wait on
 * another round's insert), and the round runs again, once: ledger accounts are never deleted.
 */
export async function runRound(store: LedgerStore, settings: RoundSettings, commands: ParsedCommand[], publishedRounds: string[]): Promise<RoundOutcome> {
  try {
    return await store.inRound((round) => decideRound(round, settings, commands, publishedRounds), settings.statementTimeoutMs);
  } catch (error) {
    if (!(error instanceof AccountsMissing)) throw error;
    await store.ensureAccounts(error.refs);
    return store.inRound((round) => decideRound(round, settings, commands, publishedRounds), settings.statementTimeoutMs);
  }
}

/** The round's steps, in the order of its guarantee (see the top of this file). */
async function decideRound(round: RoundTransaction, settings: RoundSettings, all: ParsedCommand[], publishedRounds: string[]): Promise<RoundOutcome> {
  const { known, facts } = await round.gather({ ...needsOf(all), commands: all.map(refOf) });
  const commands = all.filter((c) => isFresh(known.get(c.envelope.id)));
  if (commands.length === 0) return { known, outcomes: new Map(), written: null };
  const locked = await lockAccounts(round, commands, facts);
  const book = new BalanceBook(locked.balances);
  // The round's time: its entries', and every command's whose account is on no test clock.
  const now = wallNow();
  const changes = new RoundChanges(settings.rows, locked.alerts, facts, locked.wallets, randomUUID(), now);
  const outcomes = decideInOrder(commands, facts, changes, book, now);
  const write = changes.finish(book);
  assertRoundWritable({
    balances: write.balances, holds: [...write.newHolds ?? [], ...write.changedHolds ?? []], transfers: [...write.newTransfers, ...write.changedTransfers],
  });
  await round.commit(write, publishedRounds);
  // A hold on a test clock expires as its clock advances, not by the wall's sweep.
  for (const hold of write.newHolds ?? []) if (!facts.clockTimes.has(hold.account_id)) settings.holdsDue?.(hold.expires_at);
  return { known, outcomes, written: { roundId: write.roundId, outbox: write.outbox } };
}

/**
 * Locks the ledger accounts the commands may post to (and the held account beside each available
 * one, the wallets partner results may give money back to, the alerts that may fire); a missing
 * one ends the round's attempt (AccountsMissing).
 */
async function lockAccounts(round: RoundTransaction, commands: ParsedCommand[], facts: BatchFacts): Promise<Locked> {
  const refs = commands.flatMap((c) => (c.type === 'refused' ? [] : c.command.accounts(c.payload, c.envelope.account_id, facts)));
  const locked = await round.lock({ walletIds: walletIdsOfTransfers(facts), refs: [...refs, ...heldBeside(refs)], alertAccountIds: alertAccountsOf(refs) });
  const found = new Set(locked.balances.map((b) => b.ref.code));
  const missing = refs.filter((r) => !found.has(r.code));
  if (missing.length > 0) throw new AccountsMissing([...new Map(missing.map((r) => [r.code, r])).values()]);
  return locked;
}

/**
 * Decides each command in order on one book, each on the records as the ones before it changed
 * them, and applies its decision to the round's changes; a command of an account on a test clock
 * is decided at the clock's time (DESIGN.md section 5i), its records, status changes and events
 * carrying it as they would have at that instant. The outcomes' JSON text, by command id.
 */
function decideInOrder(commands: ParsedCommand[], facts: BatchFacts, changes: RoundChanges, book: BalanceBook, now: Date): Map<string, string> {
  const outcomes = new Map<string, string>();
  for (const command of commands) {
    const at = facts.clockTimes.get(command.envelope.account_id) ?? now;
    const decision = decide(command, facts, changes, book, at);
    changes.apply(command.envelope.id, decision, at);
    const outcome = JSON.stringify(shown(decision.outcome));
    changes.processed(processedRow(command, outcome));
    outcomes.set(command.envelope.id, outcome);
  }
  return outcomes;
}

/** A command decided by its module (ledger/commands), or refused as it is. */
function decide(command: ParsedCommand, facts: BatchFacts, changes: RoundChanges, book: BalanceBook, now: Date): Decision {
  if (command.type === 'refused') return emptyDecision(command.refusal);
  const { envelope, payload } = command;
  return command.command.decide({ commandId: envelope.id, accountId: envelope.account_id, payload, facts, locked: changes.records, book, now });
}

/** A command's row in processed_commands; a refused command keeps its key's record only when its account and key can be stored. */
function processedRow(command: ParsedCommand, outcome: string): BatchWrite['processed'][number] {
  const { envelope } = command;
  const keyed = Boolean(envelope.idempotency_key) && (command.type !== 'refused' || (isCanonicalUuid(envelope.account_id) && command.refusal.field !== 'idempotency_key' && command.refusal.field !== 'fingerprint'));
  return {
    commandId: envelope.id, type: command.type === 'refused' ? storableType(envelope.type) : command.type, outcome,
    accountId: keyed ? envelope.account_id : null, idempotencyKey: keyed ? envelope.idempotency_key! : null, fingerprint: keyed ? envelope.fingerprint ?? null : null,
  };
}

/** The command type as recorded: what the message said, when that can be stored. */
const storableType = (type: unknown): string => (typeof type === 'string' && !unstorable(type) ? type.slice(0, 100) : 'unknown');

/** How the store finds a command's earlier answer; a refused command's account and key may be unstorable. */
const refOf = ({ envelope, type }: ParsedCommand): CommandRef => (type === 'refused'
  ? { id: envelope.id, accountId: '', idempotencyKey: null } // only its own earlier answer matters
  : { id: envelope.id, accountId: envelope.account_id, idempotencyKey: envelope.idempotency_key ?? null });

/** Whether a command is decided now: not decided before, and its key not held by another route's request. */
const isFresh = (known: KnownCommand | undefined) => !known || (known.decided === null && !known.keyHeldByApi);

/** The wallets the transfers of partner results came from: an answer may give the money back to one. */
const walletIdsOfTransfers = (facts: BatchFacts): string[] =>
  [...facts.transfers.values()].flatMap((t) => (t.from_wallet_id === null || facts.wallets.has(t.from_wallet_id) ? [] : [t.from_wallet_id]));

/**
 * The held account of each main balance a round names, for its balance events' `amount`
 * (available + held + pending): locked with the others when it exists, never created (an account
 * that never held anything has none, and holds nothing).
 */
function heldBeside(refs: LedgerAccountRef[]): LedgerAccountRef[] {
  const named = new Set(refs.map((r) => r.code));
  const beside = refs.flatMap((r) => (r.kind === 'available' && r.accountId ? [held(r.accountId, r.currency)] : []));
  return [...new Map(beside.filter((r) => !named.has(r.code)).map((r) => [r.code, r])).values()];
}

/** The accounts with an available balance among a round's ledger accounts: their balance alerts may fire. */
const alertAccountsOf = (refs: LedgerAccountRef[]) => [...new Set(refs.flatMap((r) => ((r.kind === 'available' || r.kind === 'wallet_available') && r.accountId ? [r.accountId] : [])))];
