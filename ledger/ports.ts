// The storage a round of the ledger needs, stated by the ledger (as a controller owns its store's
// interface): lock the records the round's commands name and read its facts under those locks,
// lock the ledger accounts they post to, then write what they decided, atomically. ledger/store/ implements it on Postgres (ledger/store/postgres.ts);
// the round (round.ts) knows only this, so the round and its decisions run in the unit suite on
// a store held in memory (test/support/memory-ledger-store.ts).
import type { BalanceAlertRecord } from './alerts';
import type { AppliedPosting, LedgerAccountState } from './balances';
import type { LedgerAccountRef } from './chart';
import type { BatchFacts, RoundNeeds } from './commands';
import type { FxQuoteRecord } from './fx-quotes';
import type { HoldRecord } from './holds';
import type { PaymentRecord, PaymentStatus } from './payments';
import type { LateCompletionException, TransferRecord, TransferStatus } from './transfers';
import type { WalletRecord } from './wallets';

export interface LedgerStore {
  /** Makes the ledger accounts among `refs` that do not exist yet (they are never deleted). */
  ensureAccounts(refs: LedgerAccountRef[]): Promise<void>;
  /**
   * Runs `work` in one transaction: what it locks stays locked until its write is committed; if
   * `work` throws, nothing of it is kept. `statementTimeoutMs` bounds each statement (none: the default).
   */
  inRound<T>(work: (round: RoundTransaction) => Promise<T>, statementTimeoutMs?: number): Promise<T>;
}

export interface RoundTransaction {
  /**
   * Begins the round: locks the records `request` names (in the global lock order) and reads,
   * after those locks and in the same transaction, what the round knows of its commands and the
   * facts they need. Every fact a decision rests on is read here, once.
   */
  gather(request: FactsRequest): Promise<Gathered>;
  /**
   * Locks (in one global order, so rounds never wait on each other in a circle) and reads what
   * `request` names: the round's ledger accounts, after gather; or, begun with it, a whole round's.
   */
  lock(request: LockRequest): Promise<Locked>;
  /** Writes the round and marks `publishedRounds` published, then commits. */
  commit(write: BatchWrite, publishedRounds: string[]): Promise<void>;
}

/** A command as the store looks it up: its id, and the account and key its answer is kept under. */
export interface CommandRef { id: string; accountId: string; idempotencyKey: string | null }

/** What a round begins with: its commands, and what they name (ledger/commands/needs.ts). */
export type FactsRequest = RoundNeeds & { commands: CommandRef[] };

/** What the ledger already knows of a command it is handed. */
export interface KnownCommand {
  /** The outcome (its JSON text, outcome.ts) and the request fingerprint of a command decided before. */
  decided: { outcome: string; fingerprint: string | null } | null;
  /** The command's Idempotency-Key is held by a request of a route the API keeps the record of (DESIGN.md section 5). */
  keyHeldByApi: boolean;
}

export interface Gathered {
  /** For each command: whether it was decided before, and whether another route's request holds its key. */
  known: Map<string, KnownCommand>;
  /** The records as locked, and the accounts' facts. */
  facts: BatchFacts;
}

/** What a round locks: the records its commands decide on, and the ledger accounts they may post to. */
export interface LockRequest {
  transferIds?: string[];
  quoteIds?: string[];
  paymentIds?: string[];
  holdIds?: string[];
  /** Wallets the round moves money into or out of: locked shared, so none is closed under it. */
  walletIds?: string[];
  refs: LedgerAccountRef[];
  /** Accounts whose balance alerts the round reads (ledger/alerts.ts): read after the locks, so an alert created before them is seen. */
  alertAccountIds?: string[];
}

export interface Locked {
  transfers: Map<string, TransferRecord>;
  quotes: Map<string, FxQuoteRecord>;
  payments: Map<string, PaymentRecord>;
  wallets: Map<string, WalletRecord>;
  holds: Map<string, HoldRecord>;
  /** The ledger accounts in code order, with their balances. */
  balances: LedgerAccountState[];
  /** The balance alerts of `alertAccountIds`. */
  alerts: BalanceAlertRecord[];
}

export interface EntryWrite {
  id: string;
  kind: string;
  commandId: string;
  transferId: string | null;
  quoteId: string | null;
  paymentId: string | null;
  postings: AppliedPosting[];
}

export interface OutboxWrite {
  id: string;
  topic: string;
  key: string;
  accountId: string | null;
  payload: unknown;
  /** Kafka headers of the message. */
  headers?: Record<string, string>;
  /** For an account's domain event: its number in the account's sequence, set by writeBatch. */
  accountSeq?: number;
}

export interface BatchWrite {
  entries: EntryWrite[];
  balances: LedgerAccountState[];
  newTransfers: TransferRecord[];
  changedTransfers: TransferRecord[];
  transitions: Array<{ transferId: string; from: TransferStatus | null; to: TransferStatus; at: Date }>;
  /** Quotes executed in this batch, with their consumed_at. */
  consumedQuotes: FxQuoteRecord[];
  newPayments: PaymentRecord[];
  changedPayments: PaymentRecord[];
  paymentTransitions: Array<{ paymentId: string; from: PaymentStatus | null; to: PaymentStatus; at: Date }>;
  /** Each decided command with its outcome's JSON text, and the Idempotency-Key it is the record of (DESIGN.md section 5f). */
  processed: Array<{ commandId: string; type: string; outcome: string; accountId: string | null; idempotencyKey: string | null; fingerprint: string | null }>;
  outbox: OutboxWrite[];
  /** Transfers completed late in this round: each opens its exception in finance's queue. */
  lateCompletions: LateCompletionException[];
  /** Holds created in this round (in their latest state), and the others it changed; absent: none. */
  newHolds?: HoldRecord[];
  changedHolds?: HoldRecord[];
  /** The round (transaction) the outbox rows belong to, for tracking their publication. */
  roundId: string;
  now: Date;
}

