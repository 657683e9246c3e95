// What the clients share: the service's address, the model, the findings, and the members (one
// account per client, with its customer linked with both partners, its webhook endpoint and
// receiver, its event stream, and the resources it has made so far).
import type { CollectedEvents } from '../support/load';
import type { Receiver } from '../support/webhook-receiver';
import type { Findings } from './findings';
import type { Http } from './http';
import type { Amount } from '../../ledger/money';
import type { Command, Model } from './model';
import type { KeySource } from './keys';
import type { Latencies } from './latency';
import type { RateBook } from './rates';
import type { SimInternal } from './reversal-ops';
import type { ClockModel } from './clock-model';

/** How far the ledger's clock and ours may differ around a hold's expires_at, when no fault steps a clock. */
export const CLOCK_MARGIN_MS = 2_000;

/**
 * A hold as the model knows it: what it took, what its captures certainly paid, and the commands
 * that may still end it. `command` is the hold's own: its creation moved the amount from available
 * to held, and its release (void, expiry, the rest after a final capture) may still move it back.
 */
export interface SimHold {
  id: string;
  client: number;
  /** "main" or the wallet's id. */
  side: string;
  currency: string;
  amount: Amount;
  expiresAt: number;
  command: Command;
  /** Each capture sent and not refused: certain once its command is final. */
  captures: Array<{ command: Command; amount: Amount }>;
  /** Voids and final captures sent and not refused: each may have ended the hold. */
  enders: Command[];
  /** How the hold ended, once an answer said so. */
  ended: null | 'captured' | 'voided' | 'expired';
}

/**
 * A balance alert as the model knows it: the side and currency it watches, and when it may and
 * when it certainly did watch. A round decided before `sentAt` cannot have seen it; one decided
 * after `madeAt` (its creation answered) must have, until the delete: `deleteSentAt` (until then it
 * certainly watched) and `deletedAt` (answered: from then it certainly did not).
 */
export interface SimAlert {
  id: string;
  client: number;
  /** "main" or the wallet's id. */
  side: string;
  currency: string;
  direction: 'below' | 'above';
  threshold: string;
  sentAt: number;
  madeAt: number;
  deleteSentAt: number | null;
  deletedAt: number | null;
}

/** A batch answered: its id and each item's outcome, read again at the end. */
export interface SimBatch { id: string; client: number; atomic: boolean; label: string; items: Array<{ status: string; transfer_id: string | null; error: string | null }> }

export interface Member {
  index: number;
  accountId: string;
  email: string;
  /** The secret key (sk_sandbox_…) its writes use, and the session token the dashboard routes need. */
  key: string;
  token: string;
  /** Where its Idempotency-Keys and other ids of its own come from (the seed's stream for this client). */
  keys: KeySource;
  vibans: Array<Record<string, any>>;
  customerId: string;
  webhookId: string;
  /** The endpoint's signing secret (whsec_…), shown when it was made. */
  webhookSecret: string;
  receiver: Receiver;
  stream: CollectedEvents;
  transfers: string[];
  payments: string[];
  quotes: string[];
  /** The account's wallets, oldest first. */
  wallets: string[];
  holds: SimHold[];
  /** Its internal transfers the model saw made, each with its reversals (reversal-ops.ts). */
  internals: SimInternal[];
  alerts: SimAlert[];
  batches: SimBatch[];
  /** Holds refused on a late repeat (expires_at passed) whose key's first attempt may have made them: read at the end. */
  doubtful: Array<{ hold: SimHold; adopt: () => void }>;
}

/** A write whose answer the client has not learned (it gave up, or the run ended): asked again at the end. */
export interface Unlearned {
  client: number;
  path: string;
  body: unknown;
  key: string;
  headers: Record<string, string>;
  command: Command;
  learn: (answer: import('./http').Answer) => void;
}

/** What the model expects a partner's book to hold under a reference (a transfer's or payment's id): paid, or nothing paid. */
export interface PartnerEntry { label: string; client: number; paid: { amount: Amount; currency: string } | null }

/** An account on a test clock (clock-plan.ts): `index` counts the clock accounts of all clocks together. */
export interface ClockAccount { index: number; clock: number; accountId: string; email: string; key: string }

/** The clients on test clocks, driven by one client of their own (clock-ops.ts), and their exact model. */
export interface SimClocks {
  /** Its client number in the trace and the findings: one past the wall's clients. */
  client: number;
  /** Each clock's id, in the plan's order. */
  ids: string[];
  accounts: ClockAccount[];
  model: ClockModel;
  keys: KeySource;
  /** Why the model can no longer follow the service (an advance never ready, a write never answered): the clock client stops. */
  lost: string | null;
  /** The clock client's operations begun so far: a finding names the one it came from (the trace's order). */
  opIndex: number;
  stats: { advances: number; expired: number; runsCreated: number; runsRefused: number; quotesExpired: number; holdsRefused: number };
}

export interface World {
  http: Http;
  model: Model;
  /** Every request's latency, and the windows of adversarial inputs and faults. */
  latencies: Latencies;
  /** Every price the run saw, judged by the published rate table. */
  rates: RateBook;
  findings: Findings;
  members: Member[];
  unlearned: Unlearned[];
  /** Per reference, what the partner's book must show once the system is quiet (transfers to a bank or a chain, payments). */
  partnerBook: Map<string, PartnerEntry>;
  /** Commands answered as created whose final state is read once the system is quiet. */
  open: Array<{ command: Command; member: Member; resolve: (body: any) => void }>;
  /** How far the ledger's clock and ours may differ around a hold's expires_at: more in a run that steps clocks. */
  clockMarginMs: number;
  /** Transfers made with an order id in their metadata, to be found again by it at the end. */
  ordered: Array<{ client: number; order: string; id: string }>;
  /** `crossings`: the balance.threshold_crossed events the final checks found. */
  stats: { ops: number; faults: number; crossings: number };
  /** The accounts on test clocks, once set up. */
  clocks: SimClocks | null;
}
