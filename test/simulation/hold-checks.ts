// The checks of wallets and holds once the load has stopped: every hold still active is voided
// (so each one ends and its figures can be checked), each hold's final state is the model's
// (captured, voided, or expired when no answer ended it) with captured + released = amount and its
// captures the model's; its events hold.created, hold.captured and hold.released each once; and
// every balance of every side (main and each wallet: available and held) equals the model's,
// through the wallet balance route and in the ledger's own tables.
import type { Ended } from './event-checks';
import { Money, type Amount } from '../../ledger/money';
import type { Db } from '../../src/db';
import { balanceKey } from './model';
import { availableKey, endHold, heldKey } from './wallet-ops';
import type { Member, SimHold, World } from './world';

const holdsOf = (world: World): Array<[Member, SimHold]> => world.members.flatMap((m) => m.holds.map((h): [Member, SimHold] => [m, h]));

/**
 * A hold refused 400 on a repeat past its expires_at was never made, or its key's first attempt
 * made it and the repeat had to answer that (SPEC.md section 7: one outcome per key). Read by the
 * id the key gives it; one that exists is a failure, and the model takes it in so the rest of the
 * checks (its end, its events, the balances) still hold.
 */
export async function readDoubtful(world: World): Promise<void> {
  for (const member of world.members) {
    for (const { hold, adopt } of member.doubtful.splice(0)) {
      const answer = await world.http.read(member.index, `/v1/holds/${hold.id}`, { token: member.key, timeoutMs: 30_000 });
      if (typeof answer === 'string' || answer.status === 404) continue;
      world.findings.expect(false, 'a request repeated under its key answers its first outcome',
        () => `hold ${hold.id} (${hold.command.label}): made under its key, the repeat refused 400 expires_at; the hold is ${answer.body?.status}`, [member.index]);
      if (answer.status === 200) adopt();
    }
  }
}

/** Voids every hold the model has not seen end: a long one outlives the run, and an ended hold is one whose figures can be checked. */
export async function voidLeftHolds(world: World): Promise<void> {
  await Promise.all(holdsOf(world).filter(([, h]) => h.ended === null).map(async ([member, hold]) => {
    const answer = await world.http.decide(member.index, `/v1/holds/${hold.id}/void`, undefined, member.keys.uuid(), { token: member.key, deadlineMs: 60_000 });
    if (answer?.status === 200) endHold(world, hold, 'voided', answer.body.released_amount);
    // 409 hold_not_active: it expired (or a capture ended it); its read below tells which.
    else world.findings.expect(answer?.status === 409 && answer.body?.error === 'hold_not_active', 'a hold left active is voided at the end',
      () => `void of hold ${hold.id}: ${answer ? `${answer.status} ${JSON.stringify(answer.body).slice(0, 200)}` : 'no final answer'}`, [member.index]);
  }));
}

/** Each hold read back: ended as the model says, its figures adding up, its captures the model's, its events once each. */
/** Also tells `ended` of each capture's transfer (an internal transfer that completes with the capture), once the hold's captures are the model's. */
export async function holdChecks(db: Db, world: World, ended: Map<string, Ended>): Promise<void> {
  const { findings } = world;
  for (const [member, hold] of holdsOf(world)) {
    const answer = await world.http.read(member.index, `/v1/holds/${hold.id}`, { token: member.key, timeoutMs: 30_000 });
    if (typeof answer === 'string' || answer.status !== 200) {
      findings.expect(false, 'every hold can be read', () => `hold ${hold.id}: ${typeof answer === 'string' ? answer : answer.status}`, [member.index]);
      continue;
    }
    const h = answer.body;
    // No answer ended it, so only the ledger's own expiry may have, and only once it was due.
    if (hold.ended === null) {
      findings.expect(h.status === 'expired' && Date.now() + world.clockMarginMs >= hold.expiresAt, "every hold's state as the model predicts", () => `hold ${hold.id}: ${h.status}, no answer ended it`, [member.index]);
      // Every command is decided by now: what it released is what its final captures left.
      const left = hold.amount.minus(hold.captures.filter((c) => c.command.state === 'final').reduce((a, c) => a.plus(c.amount), new Money(0)));
      findings.expect(left.isEqualTo(h.released_amount), 'a hold that expired released what its captures left',
        () => `hold ${hold.id}: released ${h.released_amount}, the model's ${left.toFixed()}`, [member.index]);
      if (h.status === 'expired' || h.status === 'voided' || h.status === 'captured') endHold(world, hold, h.status, left.toFixed());
    } else {
      findings.expect(h.status === hold.ended, "every hold's state as the model predicts", () => `hold ${hold.id}: ${h.status}, the model's ${hold.ended}`, [member.index]);
    }
    const paid = hold.captures.filter((c) => c.command.state === 'final');
    const want = paid.reduce((a, c) => a.plus(c.amount), new Money(0));
    findings.expect(new Money(h.captured_amount).plus(h.released_amount).isEqualTo(hold.amount), "each hold's captured + released = amount once it ends",
      () => `hold ${hold.id}: ${h.captured_amount} captured + ${h.released_amount} released of ${h.amount}`, [member.index]);
    const asModelled = findings.expect(want.isEqualTo(h.captured_amount) && h.captures.length === paid.length, "each hold's captures the model's",
      () => `hold ${hold.id}: ${h.captures.length} captures of ${h.captured_amount}; the model's ${paid.length} of ${want.toFixed()}`, [member.index]);
    if (asModelled) {
      for (const c of h.captures) ended.set(c.transfer_id, { type: 'transfer', status: 'completed', account: member.accountId, client: member.index, label: `capture ${c.id} of hold ${hold.id}` });
    }
  }
  await holdEventsOnce(db, world);
}

/** hold.created once per hold, hold.captured once per capture, hold.released once per hold voided or expired; none of a hold the run does not know. */
async function holdEventsOnce(db: Db, world: World): Promise<void> {
  const { rows } = await db.raw(
    `SELECT payload->>'resource_id' AS id, payload->>'type' AS type, count(*)::int AS n FROM account_events
      WHERE account_id = ANY(?::uuid[]) AND payload->>'type' LIKE 'hold.%' GROUP BY 1, 2`, [world.members.map((m) => m.accountId)]);
  const seen = new Map<string, number>(rows.map((r: any) => [`${r.id} ${r.type}`, r.n]));
  const known = new Set<string>();
  for (const [member, hold] of holdsOf(world)) {
    known.add(hold.id);
    const want: Record<string, number> = {
      'hold.created': 1,
      'hold.captured': hold.captures.filter((c) => c.command.state === 'final').length,
      'hold.released': hold.ended === 'voided' || hold.ended === 'expired' ? 1 : 0,
    };
    for (const [type, n] of Object.entries(want)) {
      const got = seen.get(`${hold.id} ${type}`) ?? 0;
      world.findings.expect(got === n, 'hold events each once', () => `hold ${hold.id} (${hold.ended}): ${got} ${type}, expected ${n}`, [member.index]);
    }
  }
  const strangers = rows.filter((r: any) => !known.has(r.id));
  world.findings.expect(strangers.length === 0, 'hold events each once', () => `events of holds no client made: ${JSON.stringify(strangers.slice(0, 5))}`, []);
}

/** The model's figure for a key and currency (zero if it never moved). */
const figure = (balances: Map<string, Amount>, key: string, currency: string): Amount => balances.get(balanceKey(key, currency)) ?? new Money(0);

/** Every side's available and held equal to the model's: through GET /v1/wallets/{id}/balances, and in the ledger's tables. */
export async function walletBalanceChecks(db: Db, world: World): Promise<void> {
  const { findings, members } = world;
  const balances = world.model.balances();
  for (const member of members) {
    for (const side of ['main', ...member.wallets]) {
      const answer = await world.http.read(member.index, `/v1/wallets/${side}/balances`, { token: member.key, timeoutMs: 30_000 });
      if (typeof answer === 'string' || answer.status !== 200) {
        findings.expect(false, "wallet balances equal the model's (API)", () => `c${member.index} ${side}: ${typeof answer === 'string' ? answer : answer.status}`, [member.index]);
        continue;
      }
      const shown = new Set<string>();
      for (const b of answer.body.balances as Array<{ currency: string; available: string; held: string }>) {
        shown.add(b.currency);
        const available = figure(balances, availableKey(member, side), b.currency);
        const held = figure(balances, heldKey(member, side), b.currency);
        findings.expect(available.isEqualTo(b.available) && held.isEqualTo(b.held), "wallet balances equal the model's (API)",
          () => `c${member.index} ${side} ${b.currency}: available ${b.available}, held ${b.held}; the model's ${available.toFixed()} and ${held.toFixed()}`, [member.index]);
      }
      for (const [key, amount] of balances) {
        const [owner, currency] = key.split('|');
        if ((owner === availableKey(member, side) || owner === heldKey(member, side)) && !shown.has(currency) && !amount.isZero()) {
          findings.expect(false, "wallet balances equal the model's (API)", () => `c${member.index} ${side} ${currency}: not shown, the model's ${owner} ${amount.toFixed()}`, [member.index]);
        }
      }
    }
  }
  // The ledger's own accounts of every kind the model keys apart from the main available (checked in checks.ts).
  const { rows } = await db.raw(
    `SELECT code, currency, balance::text AS balance FROM ledger_accounts WHERE account_id = ANY(?::uuid[]) AND kind IN ('held', 'wallet_available', 'wallet_held')`,
    [members.map((m) => m.accountId)]);
  const keyOfCode = (code: string): string => {
    const [scope, id, kind] = code.split(':');
    const base = scope === 'wallet' ? `wallet:${id}` : id;
    return kind === 'held' ? `${base}:held` : base;
  };
  const inTables = new Set<string>();
  let problems = 0;
  for (const row of rows as Array<{ code: string; currency: string; balance: string }>) {
    const key = keyOfCode(row.code);
    inTables.add(balanceKey(key, row.currency));
    const want = figure(balances, key, row.currency);
    if (!findings.expect(want.isEqualTo(row.balance), "wallet balances equal the model's (ledger tables)", () => `${row.code}: ${row.balance}, the model's ${want.toFixed()}`, [])) problems++;
  }
  for (const [key, amount] of balances) {
    const [owner] = key.split('|');
    const keyed = owner.startsWith('wallet:') || owner.endsWith(':held');
    if (keyed && !inTables.has(key) && !amount.isZero()) { problems++; findings.expect(false, "wallet balances equal the model's (ledger tables)", () => `${key}: no ledger account, the model's ${amount.toFixed()}`, []); }
  }
  if (problems === 0) findings.pass();
}

/** What the run did with wallets and holds, for its last line: a run that sent none of them proves nothing about them. */
export function walletSummary(world: World): string {
  const holds = holdsOf(world).map(([, h]) => h);
  const count = (how: SimHold['ended']) => holds.filter((h) => h.ended === how).length;
  const captures = holds.reduce((n, h) => n + h.captures.filter((c) => c.command.state === 'final').length, 0);
  const moves = world.model.commands.filter((c) => c.label.includes(' wallet transfer ') && c.state === 'final').length;
  return `${world.members.reduce((n, m) => n + m.wallets.length, 0)} wallets, ${moves} wallet transfers, ${holds.length} holds (${count('captured')} captured, ${count('voided')} voided, ${count('expired')} expired), ${captures} captures`;
}
