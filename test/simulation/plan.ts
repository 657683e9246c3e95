// The seeded plan: everything a run does that is not timing. Each client draws its operations
// from a generator of its own (seed and client index), so the same seed gives every client the
// same operations whatever the service answers or how long it takes; the fault schedule has a
// generator of its own too. A failing seed's operations can be listed again with clientOps().
import { prng } from '../support/prng';
import { ILLEGAL_FORMS, LEGAL_FORMS, type IdForm } from './ids';
import type { ReversalOp } from './reversal-ops';

export type Fiat = 'USD' | 'EUR' | 'GBP';
export type FaultsMode = 'off' | 'processes' | 'on';

/** How a client departs on purpose from SPEC.md section 7 on one write. */
export type Misbehaviour =
  | null
  | 'replay' // the same key and body again after the final answer: the same outcome
  | 'other_body' // the same key with another body after the final answer: 409 idempotency_conflict
  | 'concurrent' // two requests at once under one key: one outcome
  | 'new_key_after_timeout'; // gives up on a key after a short timeout and sends again under a new one

export type Op =
  | { kind: 'faucet'; currency: Fiat | 'USDC'; cents: number; misbehave: Misbehaviour }
  | { kind: 'internal'; to: number; currency: Fiat; cents: number; order: string | null; misbehave: Misbehaviour }
  | { kind: 'chain'; to: number; cents: number; order: string | null; misbehave: Misbehaviour }
  | { kind: 'bank'; to: number; currency: Fiat; payout: Fiat; cents: number; scenario: string | null; order: string | null; misbehave: Misbehaviour }
  | { kind: 'fx'; from: Fiat; to: Fiat; cents: number; execute: 'once' | 'twice' | 'never'; quoteForm: IdForm; misbehave: Misbehaviour }
  | { kind: 'add_funds'; cents: number; scenario: string | null; customerForm: IdForm; misbehave: Misbehaviour }
  | { kind: 'send'; cents: number; scenario: string | null; customerForm: IdForm; misbehave: Misbehaviour }
  | { kind: 'public_quote'; from: Fiat; to: Fiat; cents: number }
  | { kind: 'link'; partner: 'openbank' | 'fiat' }
  | { kind: 'webhook_read'; form: IdForm }
  | { kind: 'lookup'; what: 'transfer' | 'payment' | 'quote'; pick: number; form: IdForm }
  | WalletOp
  | BatchOp
  | AlertOp
  | ReversalOp;

/**
 * Transfer batches (README "Transfer batches"): each item a body of POST /v1/transfers, from the
 * main balance. Refused items are of kinds the ledger refuses whatever the balance (no such
 * recipient, the sender itself, bank details of nobody, more than any balance holds).
 */
export type BatchItemKind = 'internal' | 'chain' | 'bank' | 'nobody' | 'self' | 'unknown_bank' | 'too_much';
export interface BatchItemPlan { kind: BatchItemKind; to: number; currency: Fiat; payout: Fiat; cents: number; note: string | null }
export type BatchOp = { kind: 'batch'; atomic: boolean; items: BatchItemPlan[]; misbehave: Misbehaviour };

/**
 * Balance alerts (README "Balances in time and balance alerts"): the threshold is the model's
 * balance when the op runs plus `offsetCents`, so the balance swings across it; `pick` chooses the
 * wallet (onWallet) or the alert to delete among the client's live ones.
 */
export type AlertOp =
  | { kind: 'alert_create'; onWallet: boolean; pick: number; currency: Fiat; direction: 'below' | 'above'; offsetCents: number; misbehave: Misbehaviour }
  // A flood: `count` alerts on one balance, one after the other, far past the limit of a balance.
  | { kind: 'alert_flood'; onWallet: boolean; pick: number; currency: Fiat; direction: 'below' | 'above'; offsetCents: number; count: number }
  | { kind: 'alert_delete'; pick: number };

/**
 * Wallets and holds (README "Wallets and holds"). `pick` chooses among the client's wallets or
 * its holds the model still thinks active, whichever exist when the op runs; `share` is the part
 * of what may be left of a hold that a capture asks for (above 1: more than is left).
 */
export type WalletOp =
  | { kind: 'wallet_create'; misbehave: Misbehaviour }
  | { kind: 'wallet_transfer'; route: 'in' | 'out' | 'between' | 'other'; to: number; pick: number; pick2: number; currency: Fiat; cents: number; misbehave: Misbehaviour }
  | { kind: 'hold'; onWallet: boolean; pick: number; currency: Fiat; cents: number; expiresInS: number; misbehave: Misbehaviour }
  | { kind: 'capture'; pick: number; to: number; share: number; final: boolean; misbehave: Misbehaviour }
  | { kind: 'void'; pick: number; misbehave: Misbehaviour }
  | { kind: 'capture_void_race'; pick: number; to: number; share: number }
  | { kind: 'captures_race'; pick: number; to: number; other: number };

/** The sandbox failures a transfer to a bank may ask for, and the final statuses each allows. */
export const TRANSFER_SCENARIOS: Record<string, string[]> = {
  none: ['completed'], outage: ['completed'], lost_answer: ['completed'], slow_answer: ['completed'], statement_fee: ['completed'],
  decline: ['failed'], error: ['failed'], reverse: ['rolled_back'],
};
/** The same for payments (add-funds and send). */
export const PAYMENT_SCENARIOS: Record<string, string[]> = {
  none: ['completed'], outage: ['completed'], lost_answer: ['completed'], statement_late: ['completed'],
  // error: the rail answers 500 and the route 502 partner_error; the payment stays pending and
  // the dispatcher submits it again, so it may still complete.
  decline: ['failed'], error: ['failed', 'completed'], reverse: ['failed', 'cancelled'],
};

const FIAT: Fiat[] = ['USD', 'EUR', 'GBP'];
const PATH_FORMS: IdForm[] = [...LEGAL_FORMS, ...ILLEGAL_FORMS.filter((f) => f !== 'empty')];

/** A derived seed for one stream of the plan, so streams do not share draws. */
export const streamSeed = (seed: number, stream: number): number => (Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) + Math.imul(stream + 1, 0xc2b2ae35)) >>> 0;

export interface ClientProfile {
  /** Index of the client. */
  index: number;
  /** The share of its writes on which it misbehaves (most clients behave). */
  misbehaviourRate: number;
}

export function clientProfile(seed: number, index: number): ClientProfile {
  const random = prng(streamSeed(seed, 1000 + index));
  return { index, misbehaviourRate: random() < 0.3 ? 0.35 : 0.03 };
}

/** An endless generator of one client's operations among `clients` clients. */
export function* clientOps(seed: number, index: number, clients: number): Generator<Op> {
  const random = prng(streamSeed(seed, index));
  const profile = clientProfile(seed, index);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
  const other = (): number => (index + 1 + Math.floor(random() * (clients - 1))) % clients;
  // Mostly small amounts; one in twelve larger than any balance can cover, so refusals happen.
  const cents = (): number => (random() < 1 / 12 ? 100_000 + Math.floor(random() * 100_000) : 1 + Math.floor(random() * 5_000));
  // An integrator's own order id on two transfers in five, found again by metadata at the end (metadata-checks.ts).
  const order = (): string | null => (random() < 0.4 ? `A-${Math.floor(random() * 1e9)}` : null);
  const misbehave = (): Misbehaviour => {
    if (random() >= profile.misbehaviourRate) return null;
    return pick(['replay', 'other_body', 'concurrent', 'new_key_after_timeout'] as const);
  };
  // A note of letters, digits, spaces and some characters beyond ASCII (each one UTF-16 unit).
  const NOTE_CHARACTERS = 'abcdefghijklmnopqrstuvwxyz 0123456789éüßøñ€£¥—…';
  const noteOf = (length: number): string => Array.from({ length }, () => NOTE_CHARACTERS[Math.floor(random() * NOTE_CHARACTERS.length)]).join('');
  const idForm = (): IdForm => (random() < 0.6 ? 'lower' : pick([...LEGAL_FORMS, ...ILLEGAL_FORMS]));
  const pair = (): [Fiat, Fiat] => {
    const from = pick(FIAT);
    return [from, pick(FIAT.filter((c) => c !== from))];
  };
  const batchItem = (): BatchItemPlan => {
    const currency = pick(FIAT);
    const kind: BatchItemKind = random() < 0.8 ? pick(['internal', 'internal', 'internal', 'chain', 'bank', 'bank'] as const) : pick(['nobody', 'self', 'unknown_bank', 'too_much'] as const);
    const payout = random() < 0.6 ? currency : pick(FIAT.filter((c) => c !== currency));
    const note = random() < 0.2 ? noteOf(1 + Math.floor(random() * 300)) : null;
    return { kind, to: other(), currency, payout, cents: kind === 'too_much' ? 10_000_000 : 1 + Math.floor(random() * 3_000), note };
  };
  for (;;) {
    // One op in ten a batch or an alert's, drawn first too.
    if (random() < 0.1) {
      const roll = random();
      if (roll < 0.5) {
        // Mostly small batches, some up to 50 items, so one can outgrow the balance it draws on, and
        // now and then one of 200 to 1,000 (the most a batch takes), its notes up to 300 characters.
        const size = random() < 0.03 ? 200 + Math.floor(random() * 801) : random() < 0.8 ? 1 + Math.floor(random() * 8) : 9 + Math.floor(random() * 42);
        yield { kind: 'batch', atomic: random() < 0.5, items: Array.from({ length: size }, batchItem), misbehave: misbehave() };
      } else if (roll < 0.53) {
        yield { kind: 'alert_flood', onWallet: random() < 0.25, pick: random(), currency: pick(FIAT), direction: pick(['below', 'above'] as const), offsetCents: Math.round((random() - 0.5) * 20_000), count: 25 + Math.floor(random() * 976) };
      } else if (roll < 0.85) {
        yield {
          kind: 'alert_create', onWallet: random() < 0.25, pick: random(), currency: pick(FIAT), direction: pick(['below', 'above'] as const),
          offsetCents: Math.round((random() - 0.5) * 20_000), misbehave: misbehave(),
        };
      } else yield { kind: 'alert_delete', pick: random() };
      continue;
    }
    // One in twenty-five reverses one of the client's internal transfers (some all that is left, some
    // more than is left, some two at once on one transfer), drawn before the rest too.
    if (random() < 0.04) {
      yield { kind: 'reverse', pick: random(), share: random() < 0.15 ? 1.3 : random(), full: random() < 0.25, race: random() < 0.15, misbehave: misbehave() };
      continue;
    }
    // A quarter of the operations are wallets' and holds', drawn before the rest so their share
    // does not change the mix of the others.
    if (random() < 0.25) {
      const roll = random();
      const share = random() < 0.15 ? 1.2 : random();
      if (roll < 0.08) yield { kind: 'wallet_create', misbehave: misbehave() };
      else if (roll < 0.35) {
        yield { kind: 'wallet_transfer', route: pick(['in', 'in', 'out', 'between', 'other'] as const), to: other(), pick: random(), pick2: random(), currency: pick(FIAT), cents: cents(), misbehave: misbehave() };
      } else if (roll < 0.60) {
        // Some holds expire within the run (seconds), most outlive it (an hour to a week).
        const expiresInS = random() < 0.35 ? 3 + Math.floor(random() * 20) : 3_600 + Math.floor(random() * 7 * 86_400);
        yield { kind: 'hold', onWallet: random() < 0.4, pick: random(), currency: pick(FIAT), cents: cents(), expiresInS, misbehave: misbehave() };
      } else if (roll < 0.80) yield { kind: 'capture', pick: random(), to: other(), share, final: random() < 0.3, misbehave: misbehave() };
      else if (roll < 0.88) yield { kind: 'void', pick: random(), misbehave: pick([null, null, null, 'replay', 'concurrent'] as const) };
      else if (roll < 0.95) yield { kind: 'capture_void_race', pick: random(), to: other(), share };
      else yield { kind: 'captures_race', pick: random(), to: other(), other: other() };
      continue;
    }
    const roll = random();
    if (roll < 0.08) yield { kind: 'faucet', currency: pick([...FIAT, 'USDC'] as const), cents: 1 + Math.floor(random() * 20_000), misbehave: misbehave() };
    else if (roll < 0.30) yield { kind: 'internal', to: other(), currency: pick(FIAT), cents: cents(), order: order(), misbehave: misbehave() };
    else if (roll < 0.36) yield { kind: 'chain', to: other(), cents: cents(), order: order(), misbehave: misbehave() };
    else if (roll < 0.50) {
      const currency = pick(FIAT);
      yield { kind: 'bank', to: other(), currency, payout: random() < 0.6 ? currency : pick(FIAT.filter((c) => c !== currency)), cents: cents(), scenario: random() < 0.5 ? null : pick(Object.keys(TRANSFER_SCENARIOS).filter((s) => s !== 'none')), order: order(), misbehave: misbehave() };
    } else if (roll < 0.62) {
      const [from, to] = pair();
      yield { kind: 'fx', from, to, cents: cents(), execute: random() < 0.8 ? 'once' : pick(['twice', 'never'] as const), quoteForm: idForm(), misbehave: misbehave() };
    } else if (roll < 0.69) yield { kind: 'add_funds', cents: cents(), scenario: random() < 0.6 ? null : pick(Object.keys(PAYMENT_SCENARIOS).filter((s) => s !== 'none')), customerForm: idForm(), misbehave: misbehave() };
    else if (roll < 0.76) yield { kind: 'send', cents: cents(), scenario: random() < 0.6 ? null : pick(Object.keys(PAYMENT_SCENARIOS).filter((s) => s !== 'none')), customerForm: idForm(), misbehave: misbehave() };
    else if (roll < 0.80) {
      const [from, to] = pair();
      yield { kind: 'public_quote', from, to, cents: cents() };
    } else if (roll < 0.82) yield { kind: 'link', partner: pick(['openbank', 'fiat'] as const) };
    else if (roll < 0.85) yield { kind: 'webhook_read', form: pick(PATH_FORMS) };
    else yield { kind: 'lookup', what: pick(['transfer', 'payment', 'quote'] as const), pick: random(), form: pick(PATH_FORMS) };
  }
}

export type ServerTarget = 'kafka' | 'redis' | 'postgres';
export type ProcessTarget = 'ledger' | 'ledger2' | 'api' | 'workers' | 'rails';
/** The links a partition or a stall acts on: the API to Kafka, the first ledger to Postgres. */
export type LinkTarget = 'api_kafka' | 'ledger_postgres';
/** The mock partners a fault can take down (their outage control: every call answered 503). */
export const PARTNERS = ['fiat', 'chain', 'claimless', 'openbank'] as const;
export interface Fault {
  /** When it fires: once the clients have begun this many operations (after the set-up). */
  atOp: number; target: ProcessTarget | ServerTarget | LinkTarget | 'redis_keys' | (typeof PARTNERS)[number];
  action: 'kill' | 'stop' | 'flush' | 'outage' | 'partition' | 'stall' | 'clock_step'; downMs: number;
  /** A clock step's size: the process runs this far ahead (or behind, below zero) of the wall clock for `downMs`. */
  stepMs?: number;
}

/** About what the clients of a run together do in a second here: the schedule's times become counts of operations at this pace. */
export const NOMINAL_OPS_PER_S = 50;

/** The longest a partner is down in any run (runs of ten minutes or more; shorter ones, a minute). */
export const PARTNER_OUTAGE_MS_MAX = 180_000;

/** The largest clock step: as far as a process's wall clock may be off while the model stays exact (world.ts clockMarginMs). */
export const CLOCK_STEP_MS_MAX = 6_000;

/** The kinds of fault a run can inject; `--short` injects each at least once. */
export const FAULT_CLASSES = ['process_kill', 'process_stop', 'server_kill', 'server_stop', 'partition', 'stall', 'flush', 'outage', 'clock_step'] as const;
export type FaultClass = (typeof FAULT_CLASSES)[number];

export function classOf(fault: Fault): FaultClass {
  if (fault.action === 'kill' || fault.action === 'stop') return `${(SERVERS as readonly string[]).includes(fault.target) ? 'server' : 'process'}_${fault.action}`;
  return fault.action === 'clock_step' ? 'clock_step' : fault.action;
}

const SERVERS: readonly ServerTarget[] = ['kafka', 'redis', 'postgres'];
const PROCESSES: readonly ProcessTarget[] = ['ledger', 'ledger2', 'api', 'workers', 'rails'];
/** The processes whose clock steps: those that decide with time (the rails' books keep the wall's). */
const STEPPED: readonly ProcessTarget[] = ['ledger', 'ledger2', 'api', 'workers'];
const LINKS: readonly LinkTarget[] = ['api_kafka', 'ledger_postgres'];

/** One fault of `kind`, its target and duration drawn from `random`. */
function faultOf(kind: FaultClass, atOp: number, random: () => number, outageMsMax: number): Fault {
  const pickOf = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)];
  switch (kind) {
    // The run's own Redis keys flushed (rate-limit buckets, caches, leases): safe beside other runs.
    case 'flush': return { atOp, target: 'redis_keys', action: 'flush', downMs: 0 };
    // A partner down for ten seconds to a minute, up to three minutes in a run of ten minutes or
    // more (longer than the dispatcher's retries): nothing it may have made is failed meanwhile.
    case 'outage': return { atOp, target: pickOf(PARTNERS), action: 'outage', downMs: Math.round(10_000 + random() * (outageMsMax - 10_000)) };
    // A link cut or stalled for two to fifteen seconds: the process lives, its peer is gone.
    case 'partition': case 'stall': return { atOp, target: pickOf(LINKS), action: kind, downMs: Math.round(2_000 + random() * 13_000) };
    // Paused past the consumers' session timeout (10 s), so the group rebalances without it.
    case 'process_stop': return { atOp, target: pickOf(PROCESSES.filter((p) => p !== 'rails')), action: 'stop', downMs: 12_000 + Math.round(random() * 3_000) };
    case 'server_stop': return { atOp, target: pickOf(SERVERS), action: 'stop', downMs: 12_000 + Math.round(random() * 3_000) };
    case 'process_kill': return { atOp, target: pickOf(PROCESSES), action: 'kill', downMs: Math.round(500 + random() * 4_000) };
    case 'server_kill': return { atOp, target: pickOf(SERVERS), action: 'kill', downMs: Math.round(500 + random() * 4_000) };
    // A process restarted with its wall clock stepped ahead or behind (an NTP step, a VM resumed),
    // for ten to thirty seconds, then restarted on the right time.
    case 'clock_step': {
      const stepMs = Math.round((random() < 0.5 ? -1 : 1) * (1_000 + random() * (CLOCK_STEP_MS_MAX - 1_000)));
      return { atOp, target: pickOf(STEPPED), action: 'clock_step', downMs: Math.round(10_000 + random() * 20_000), stepMs };
    }
  }
}

/**
 * The faults of a run of `durationMs` at the nominal pace: bursts (two to four faults a few seconds
 * apart) between quiet stretches, so recovery itself meets faults and also gets time to finish. With
 * `everyClass` (--short), each class of fault the mode allows comes first, once, in a seeded order,
 * spread over the run. Times are counted in operations, so a seed's faults meet the same operations
 * however fast the machine is.
 */
export function faultSchedule(seed: number, durationMs: number, mode: FaultsMode, everyClass = false): Fault[] {
  if (mode === 'off') return [];
  const random = prng(streamSeed(seed, 999_999));
  const faults: Fault[] = [];
  const atOp = (ms: number): number => Math.round((ms * NOMINAL_OPS_PER_S) / 1_000);
  const outageMsMax = durationMs >= 600_000 ? PARTNER_OUTAGE_MS_MAX : 60_000;
  const allowed = FAULT_CLASSES.filter((kind) => mode === 'on' || !kind.startsWith('server_'));
  let at = 8_000 + random() * 10_000;
  const lastAt = durationMs - 10_000;
  if (everyClass) {
    const tour = [...allowed];
    for (let i = tour.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [tour[i], tour[j]] = [tour[j], tour[i]];
    }
    const step = Math.max(0, lastAt - at) / tour.length;
    for (const kind of tour) {
      faults.push(faultOf(kind, atOp(at), random, outageMsMax));
      at += step;
    }
    return faults;
  }
  while (at < lastAt) {
    const burst = 2 + Math.floor(random() * 3);
    for (let i = 0; i < burst && at < lastAt; i++) {
      const roll = random();
      const kind: FaultClass = roll < 0.1 ? 'flush' : roll < 0.23 ? 'outage' : roll < 0.36 ? (random() < 0.5 ? 'partition' : 'stall') : roll < 0.44 ? 'clock_step'
        : mode === 'on' && random() < 0.25 ? (random() < 0.2 ? 'server_stop' : 'server_kill') : (random() < 0.2 ? 'process_stop' : 'process_kill');
      faults.push(faultOf(kind, atOp(at), random, outageMsMax));
      at += 2_000 + random() * 6_000;
    }
    at += 20_000 + random() * 30_000; // a quiet stretch
  }
  return faults;
}
