// A client's balance alerts (README "Balances in time and balance alerts"): made with a threshold
// near the model's balance, so the run's transfers swing the balance across it, and some deleted.
// Once the system is quiet, each alert's crossings are the model's over the ledger's own sequence
// of postings on the balance it watches (concurrent commands leave their order to the ledger, not
// to the seed): a `balance.threshold_crossed` exactly once for each posting that took the balance
// from within the threshold to beyond it while the alert certainly watched, none outside its
// life, each with the posting's balance before and after, on the account's event stream.
import { Money, type Amount } from '../../ledger/money';
import { ALERTS_PER_BALANCE_MAX } from '../../src/balance-alerts/routes';
import type { Db } from '../../src/db';
import type { Answer } from './http';
import type { Command } from './model';
import type { AlertOp, Fiat, Misbehaviour } from './plan';
import { availableKey, pickOf } from './wallet-ops';
import { CLOCK_MARGIN_MS, type Member, type SimAlert, type World } from './world';
import { money, unexpected, write } from './writes';

/** How far a round's time may lie from the moment its alerts were read, and the ledger's clock from ours. */
const ROUND_MARGIN_MS = 1_000;

/** Alert creations begun and not yet learned, per balance ("client side currency"): each may have made one. */
const creating = new Map<string, number>();

/**
 * One alert on `side` in `currency`. A balance takes at most ALERTS_PER_BALANCE_MAX: a creation is
 * answered only while fewer may be alive (no delete sent), and 422 balance_alert_limit_exceeded
 * naming wallet_id only when that many may be (not yet deleted for certain, or being made).
 */
async function createAlert(world: World, member: Member, side: string, currency: Fiat, direction: 'below' | 'above', offsetCents: number, misbehave: Misbehaviour): Promise<void> {
  const balance = world.model.balance(availableKey(member, side), currency);
  // A threshold is an amount above zero (0.00 is refused naming it).
  const cents = Math.max(1, balance.times(100).integerValue(Money.ROUND_DOWN).toNumber() + offsetCents);
  const threshold = money(cents);
  const body = { currency, [direction]: threshold, ...(side === 'main' ? {} : { wallet_id: side }) };
  const on = `${member.index} ${side} ${currency}`;
  const ofBalance = () => member.alerts.filter((a) => a.side === side && a.currency === currency);
  const sentAt = Date.now();
  // What the model learns of an answer to a creation at `asked` (the threshold its body sent).
  const learnAt = (asked: string) => (command: Command, answer: Answer) => {
    creating.set(on, Math.max(0, (creating.get(on) ?? 0) - 1));
    const mayBeFull = ofBalance().filter((a) => a.deletedAt === null).length + (creating.get(on) ?? 0) >= ALERTS_PER_BALANCE_MAX;
    if (answer.status !== 200 && answer.status !== 201) {
      world.model.refuse(command);
      if (answer.body?.error === 'balance_alert_limit_exceeded') {
        world.findings.expect(mayBeFull && answer.status === 422 && answer.body?.details === 'wallet_id', 'a balance refuses alerts only when it may be full, naming wallet_id',
          () => `${command.label}: ${answer.status} ${answer.body?.details}; ${ofBalance().filter((a) => a.deletedAt === null).length} alerts may be alive`, [member.index]);
      } else unexpected(world, command, member, answer, []);
      return;
    }
    const a = answer.body;
    world.findings.expect(a?.currency === currency && a?.wallet_id === side && a?.[direction] === asked, 'an alert is answered as sent',
      () => `${command.label}: ${JSON.stringify(a).slice(0, 300)}`, [member.index]);
    const known = member.alerts.some((x) => x.id === a.id);
    if (!known) {
      const alive = ofBalance().filter((x) => x.deleteSentAt === null).length;
      world.findings.expect(alive < ALERTS_PER_BALANCE_MAX, 'a balance takes no more alerts than its limit',
        () => `${command.label}: made with ${alive} alerts alive on the balance`, [member.index]);
      member.alerts.push({ id: a.id, client: member.index, side, currency, direction, threshold: asked, sentAt, madeAt: Date.now(), deleteSentAt: null, deletedAt: null });
    }
    world.model.answer(command, []);
  };
  const other = money(cents + 1);
  await write(world, {
    member, label: `c${member.index} alert ${direction} ${threshold} ${currency} on ${side.slice(0, 8)}`, path: '/v1/balance-alerts', body,
    otherBody: { ...body, [direction]: other }, possible: [], idField: (b) => b?.id,
    onBegin: () => { creating.set(on, (creating.get(on) ?? 0) + 1); },
    learn: learnAt(threshold),
    learnOtherAsNew: learnAt(other),
  }, misbehave);
}

async function alertCreate(world: World, member: Member, op: Extract<AlertOp, { kind: 'alert_create' }>): Promise<void> {
  const side = (op.onWallet ? pickOf(member.wallets, op.pick) : undefined) ?? 'main';
  // Everyday clients stay within the limit (the plan's op is skipped there); floods do not.
  if (member.alerts.filter((a) => a.side === side && a.currency === op.currency && a.deletedAt === null).length >= ALERTS_PER_BALANCE_MAX) return;
  await createAlert(world, member, side, op.currency, op.direction, op.offsetCents, op.misbehave);
}

/** `count` creations on one balance, one after the other: the first fill it, the rest are refused. */
async function alertFlood(world: World, member: Member, op: Extract<AlertOp, { kind: 'alert_flood' }>): Promise<void> {
  const side = (op.onWallet ? pickOf(member.wallets, op.pick) : undefined) ?? 'main';
  world.findings.trace(member.index, `c${member.index} a flood of ${op.count} alerts on ${side.slice(0, 8)} ${op.currency}`);
  await world.latencies.adversary(member.index, async () => {
    for (let i = 0; i < op.count; i++) await createAlert(world, member, side, op.currency, op.direction, op.offsetCents + ((i * 37) % 500) - 250, null);
  });
}

async function alertDelete(world: World, member: Member, op: Extract<AlertOp, { kind: 'alert_delete' }>): Promise<void> {
  const alert = pickOf(member.alerts.filter((a) => a.deleteSentAt === null), op.pick);
  if (!alert) return;
  const label = `c${member.index} delete alert ${alert.id.slice(0, 8)}`;
  world.findings.trace(member.index, label);
  alert.deleteSentAt = Date.now();
  const answer = await world.http.decide(member.index, `/v1/balance-alerts/${alert.id}`, undefined, member.keys.uuid(), { token: member.key, method: 'DELETE' });
  if (!answer) return; // undecided: it may be gone from any moment on; the checks take it as deleted at the end
  world.findings.trace(member.index, `  <- ${answer.status} ${answer.body?.error ?? ''}`);
  // 404: a repeat after the first attempt deleted it and its answer was lost with a restarting API.
  world.findings.expect((answer.status === 200 && answer.body?.deleted === true) || (answer.status === 404 && answer.body?.error === 'resource_not_found'),
    'an alert is deleted', () => `${label}: ${answer.status} ${JSON.stringify(answer.body).slice(0, 200)}`, [member.index]);
  alert.deletedAt = Date.now();
}

export async function runAlertOp(world: World, member: Member, op: AlertOp): Promise<void> {
  if (op.kind === 'alert_create') return alertCreate(world, member, op);
  if (op.kind === 'alert_flood') return alertFlood(world, member, op);
  return alertDelete(world, member, op);
}

interface Posting { id: string; entry_id: string; before: Amount; after: Amount; atMs: number }

const beyond = (alert: SimAlert, balance: Amount): boolean => (alert.direction === 'below' ? balance.isLessThan(alert.threshold) : balance.isGreaterThan(alert.threshold));
const attributesOf = (payload: any): any => {
  const a = payload?.data?.attributes ?? payload?.attributes;
  return typeof a === 'string' ? JSON.parse(a) : a ?? {};
};

/** Each alert's events against the crossings the ledger's postings make during its life. */
export async function alertChecks(db: Db, world: World): Promise<void> {
  const { findings } = world;
  const endedAt = Date.now();
  // A posting's time is its ledger's clock: a run that steps a ledger's clock moves it that far.
  const marginMs = ROUND_MARGIN_MS + Math.max(0, world.clockMarginMs - CLOCK_MARGIN_MS);
  const alerts = world.members.flatMap((m) => m.alerts);
  const { rows: events } = await db.raw(
    `SELECT id, payload FROM account_events WHERE account_id = ANY(?::uuid[]) AND payload->>'type' = 'balance.threshold_crossed'`, [world.members.map((m) => m.accountId)]);
  world.stats.crossings = events.length;
  const byAlert = new Map<string, any[]>();
  for (const e of events) byAlert.set(e.payload.resource_id, [...(byAlert.get(e.payload.resource_id) ?? []), e]);
  const strangers = [...byAlert.keys()].filter((id) => !alerts.some((a) => a.id === id));
  findings.expect(strangers.length === 0, 'no balance.threshold_crossed but for an alert the run made', () => `events of alerts ${strangers.slice(0, 5).join(', ')}`, []);

  for (const alert of alerts) {
    const member = world.members[alert.client];
    const f = (ok: boolean, check: string, detail: () => string) => findings.expect(ok, check, () => `alert ${alert.id} (${alert.direction} ${alert.threshold} ${alert.currency} on ${alert.side.slice(0, 8)}): ${detail()}`, [alert.client]);
    const code = alert.side === 'main' ? `acct:${member.accountId}:available:${alert.currency}` : `wallet:${alert.side}:available:${alert.currency}`;
    const { rows } = await db.raw(
      `SELECT p.id, p.entry_id, p.amount::text AS amount, p.balance_after::text AS balance_after, (extract(epoch FROM p.created_at) * 1000)::float8 AS at_ms
         FROM postings p JOIN ledger_accounts la ON la.id = p.ledger_account_id WHERE la.code = ? ORDER BY p.seq`, [code]);
    const postings: Posting[] = rows.map((r: any) => ({ id: r.id, entry_id: r.entry_id, before: new Money(r.balance_after).minus(r.amount), after: new Money(r.balance_after), atMs: Number(r.at_ms) }));
    const mine = byAlert.get(alert.id) ?? [];
    const deletedAt = alert.deleteSentAt === null ? null : alert.deletedAt ?? endedAt;
    for (const p of postings.filter((x) => !beyond(alert, x.before) && beyond(alert, x.after))) {
      const n = mine.filter((e) => attributesOf(e.payload).posting_id === p.id).length;
      const certain = p.atMs > alert.madeAt + marginMs && (alert.deleteSentAt === null || p.atMs < alert.deleteSentAt - marginMs);
      const outside = p.atMs < alert.sentAt - marginMs || (deletedAt !== null && p.atMs > deletedAt + marginMs);
      const what = () => `posting ${p.id} ${p.before.toFixed(2)} → ${p.after.toFixed(2)} at ${new Date(p.atMs).toISOString()}: ${n} events`;
      if (certain) f(n === 1, 'balance.threshold_crossed exactly once per crossing the model finds', what);
      else if (outside) f(n === 0, 'no balance.threshold_crossed outside its alert\'s life', what);
      else f(n <= 1, 'balance.threshold_crossed exactly once per crossing the model finds', what);
    }
    for (const e of mine) {
      const a = attributesOf(e.payload);
      const p = postings.find((x) => x.id === a.posting_id);
      const ok = p !== undefined && !beyond(alert, p.before) && beyond(alert, p.after) && a.entry_id === p.entry_id
        && a.balance_before === p.before.toFixed(2) && a.balance_after === p.after.toFixed(2) && e.payload.data?.amount === a.balance_after
        && a.direction === alert.direction && a.threshold === alert.threshold && a.wallet_id === alert.side;
      f(ok, 'each balance.threshold_crossed names a crossing posting, its balance before and after', () => `event ${e.id}: ${JSON.stringify(a).slice(0, 300)}`);
      f(member.stream.ids.has(e.id), 'each balance.threshold_crossed on the account\'s event stream', () => `event ${e.id} not streamed`);
    }
  }
}

/** What the run did with alerts, for its last line. */
export function alertSummary(world: World): string {
  const alerts = world.members.flatMap((m) => m.alerts);
  return `${alerts.length} alerts (${alerts.filter((a) => a.deleteSentAt !== null).length} deleted), ${world.stats.crossings} crossings announced`;
}
