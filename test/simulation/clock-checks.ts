// The checks of the accounts on test clocks against their exact model (clock-model.ts). After each
// advance: every clock account's balances to the cent (a schedule may pay an account on another
// clock); each hold the model expired in it read back expired with all of it released, and the
// next one due still active (not a second early); each schedule of the clock's accounts read back
// with the model's runs, in order, each at its own instant, created or refused insufficient_funds
// as the model's balance then said. At the end: the holds still active voided (every held amount
// ends), each clock ready at the model's time, each created run's transfer completed at its
// instant for its amount, and the events told at the clock's instants.
import type { Db } from '../../src/db';
import type { Happening, ModelSchedule } from './clock-model';
import type { World } from './world';

const iso = (ms: number): string => new Date(ms).toISOString();

/** A finding of the clock client, naming its operation (its place in the trace's order). */
export function clockExpect(world: World, ok: boolean, check: string, detail: () => string): boolean {
  const clocks = world.clocks!;
  return world.findings.expect(ok, check, () => `clock op #${clocks.opIndex}: ${detail()}`, [clocks.client]);
}

const FIAT = ['USD', 'EUR', 'GBP'];

async function read(world: World, account: number, path: string): Promise<any | null> {
  const clocks = world.clocks!;
  const answer = await world.http.read(clocks.client, path, { token: clocks.accounts[account].key, timeoutMs: 30_000 });
  const ok = clockExpect(world, typeof answer !== 'string' && answer.status === 200, 'a clock account reads its own resources', () => `${path}: ${typeof answer === 'string' ? answer : answer.status}`);
  return ok ? (answer as { body: any }).body : null;
}

/** Every clock account's available and held, per fiat currency, equal to the model's. */
async function balancesAsModelled(world: World, after: string): Promise<void> {
  const { accounts, model } = world.clocks!;
  for (const account of accounts) {
    const body = await read(world, account.index, '/v1/wallets/main/balances');
    if (!body) continue;
    for (const currency of FIAT) {
      const shown = (body.balances as Array<{ currency: string; available: string; held: string }>).find((b) => b.currency === currency);
      const want = model.balance(account.index, currency);
      clockExpect(world, want.available.isEqualTo(shown?.available ?? 0) && want.held.isEqualTo(shown?.held ?? 0), "a clock account's balances equal the model's to the cent",
        () => `${after}: k${account.index} ${currency} available ${shown?.available}, held ${shown?.held}; the model's ${want.available.toFixed()} and ${want.held.toFixed()}`);
    }
  }
}

/** A schedule read back: its runs the model's, in order, each at its instant and with its outcome; its next run and status too. */
async function scheduleAsModelled(world: World, schedule: ModelSchedule, after: string): Promise<void> {
  const { model } = world.clocks!;
  const body = await read(world, schedule.account, `/v1/scheduled-transfers/${schedule.id}`);
  if (!body) return;
  const next = model.nextRunMs(schedule);
  const shown = (body.runs as any[]).map((r) => `${r.occurrence}@${r.scheduled_for}/${r.run_at}:${r.status}${r.error ? `:${r.error.error}` : ''}`);
  const want = schedule.runs.map((r) => `${r.occurrence}@${iso(r.atMs)}/${iso(r.atMs)}:${r.status}${r.error ? `:${r.error}` : ''}`);
  clockExpect(world, JSON.stringify(shown) === JSON.stringify(want), "each scheduled run as the model predicts: its count, order, instant and outcome",
    () => `${after}: schedule ${schedule.id} of k${schedule.account} (${schedule.amount.toFixed()} ${schedule.currency}): runs ${JSON.stringify(shown)}, the model's ${JSON.stringify(want)}`);
  clockExpect(world, body.next_run_at === (next === null ? null : iso(next)) && body.status === (next === null ? 'completed' : 'scheduled'), "a schedule's next run as the model predicts",
    () => `${after}: schedule ${schedule.id}: ${body.status}, next ${body.next_run_at}; the model's ${next === null ? 'completed' : iso(next)}`);
}

/** What an advance of `clock` did, as the model says it must have: read back. */
export async function afterAdvance(world: World, clock: number, happened: Happening[]): Promise<void> {
  const clocks = world.clocks!;
  const { model } = clocks;
  const after = `after advancing k${clock} to ${iso(model.nowMs[clock])}`;
  for (const h of happened) {
    if (h.kind === 'expired') clocks.stats.expired++;
    else if (h.run.status === 'created') clocks.stats.runsCreated++;
    else clocks.stats.runsRefused++;
  }
  await balancesAsModelled(world, after);
  for (const h of happened) {
    if (h.kind !== 'expired') continue;
    const body = await read(world, h.hold.account, `/v1/holds/${h.hold.id}`);
    if (body) {
      clockExpect(world, body.status === 'expired' && h.hold.amount.isEqualTo(body.released_amount), 'a hold on a clock expires at its instant, releasing what it held',
        () => `${after}: hold ${h.hold.id} due ${iso(h.hold.expiresAtMs)}: ${body.status}, released ${body.released_amount} of ${h.hold.amount.toFixed()}`);
    }
  }
  const mine = (account: number) => clocks.accounts[account].clock === clock;
  const nextHold = model.holds.filter((h) => h.status === 'active' && mine(h.account)).sort((a, b) => a.expiresAtMs - b.expiresAtMs)[0];
  if (nextHold) {
    const body = await read(world, nextHold.account, `/v1/holds/${nextHold.id}`);
    if (body) clockExpect(world, body.status === 'active', 'a hold on a clock is active until its instant', () => `${after}: hold ${nextHold.id} due ${iso(nextHold.expiresAtMs)}: ${body.status}`);
  }
  const touched = new Set(happened.flatMap((h) => (h.kind === 'run' ? [h.schedule] : [])));
  // The schedules that ran, and those still waiting on this clock whose next run the advance stopped short of.
  for (const schedule of model.schedules.filter((s) => mine(s.account) && (touched.has(s) || model.nextRunMs(s) !== null))) await scheduleAsModelled(world, schedule, after);
}

/** At the end: every hold the model has active voided, so that no held amount outlives the run (checks.ts). */
export async function voidClockHolds(world: World): Promise<void> {
  const clocks = world.clocks;
  if (!clocks) return;
  for (const hold of clocks.model.holds.filter((h) => h.status === 'active')) {
    const answer = await world.http.decide(clocks.client, `/v1/holds/${hold.id}/void`, undefined, clocks.keys.uuid(), { token: clocks.accounts[hold.account].key, deadlineMs: 60_000 });
    // A model that stopped following may have missed the hold's expiry (409 hold_not_active): its
    // failure is reported once (clockFinalChecks); the holds are still voided, so that "nothing
    // left held" reports the service's state, not the model's lapse.
    if (clocks.lost !== null) continue;
    if (clockExpect(world, answer?.status === 200 && answer.body?.status === 'voided', 'a hold on a clock still active at the end is voided',
      () => `hold ${hold.id}: ${answer ? `${answer.status} ${JSON.stringify(answer.body).slice(0, 200)}` : 'no final answer'}`)) clocks.model.release(hold, 'voided');
  }
}

/** Once the system is quiet: clocks, balances, runs' transfers and the events' instants as the model says. */
export async function clockFinalChecks(db: Db, world: World): Promise<void> {
  const clocks = world.clocks;
  if (!clocks) return;
  if (clocks.lost !== null) {
    clockExpect(world, false, 'the model follows the clocks to the end', () => `stopped following: ${clocks.lost}`);
    return;
  }
  const { model } = clocks;
  for (const [clock] of clocks.ids.entries()) {
    const first = clocks.accounts.find((a) => a.clock === clock)!;
    const body = await read(world, first.index, `/v1/sandbox/test-clocks/${clocks.ids[clock]}`);
    if (body) clockExpect(world, body.status === 'ready' && body.frozen_time === iso(model.nowMs[clock]), "every test clock ready at the model's time at the end",
      () => `k${clock}: ${body.status} at ${body.frozen_time}, the model's ${iso(model.nowMs[clock])}`);
  }
  await balancesAsModelled(world, 'at the end');
  for (const schedule of model.schedules) {
    const body = await read(world, schedule.account, `/v1/scheduled-transfers/${schedule.id}`);
    for (const [i, run] of schedule.runs.entries()) {
      if (run.status !== 'created' || !body?.runs[i]?.transfer_id) continue;
      const t = await read(world, schedule.account, `/v1/transfers/${body.runs[i].transfer_id}`);
      if (t) clockExpect(world, t.status === 'completed' && schedule.amount.isEqualTo(t.amount) && t.currency === schedule.currency && t.created_at === iso(run.atMs),
        "a scheduled run's transfer completed for its amount at its instant", () => `schedule ${schedule.id} run ${run.occurrence}: ${t.status} ${t.amount} ${t.currency} at ${t.created_at}, the model's ${schedule.amount.toFixed()} at ${iso(run.atMs)}`);
    }
  }
  await eventsAtClockInstants(db, world);
}

/** hold.released of an expired hold told at its expiry; scheduled_transfer.run at each run's instant, once each. */
async function eventsAtClockInstants(db: Db, world: World): Promise<void> {
  const { model, accounts } = world.clocks!;
  const { rows } = await db.raw(
    `SELECT payload->>'type' AS type, payload->>'resource_id' AS id, payload->>'created_at' AS at, payload->'data'->>'attributes' AS attributes FROM account_events
      WHERE account_id = ANY(?::uuid[]) AND payload->>'type' IN ('hold.released', 'scheduled_transfer.run')`, [accounts.map((a) => a.accountId)]);
  const released = new Map<string, string[]>();
  const runs = new Map<string, string[]>();
  for (const row of rows as Array<{ type: string; id: string; at: string; attributes: string | null }>) {
    if (row.type === 'hold.released') released.set(row.id, [...(released.get(row.id) ?? []), row.at]);
    else runs.set(row.id, [...(runs.get(row.id) ?? []), `${JSON.parse(row.attributes ?? '{}').occurrence}@${row.at}`]);
  }
  for (const hold of model.holds.filter((h) => h.status === 'expired')) {
    const seen = released.get(hold.id) ?? [];
    clockExpect(world, seen.length === 1 && seen[0] === iso(hold.expiresAtMs), "a hold's expiry told once, at its clock instant",
      () => `hold ${hold.id} due ${iso(hold.expiresAtMs)}: hold.released at ${JSON.stringify(seen)}`);
  }
  for (const schedule of model.schedules) {
    const seen = (runs.get(schedule.id) ?? []).sort((a, b) => Number.parseInt(a, 10) - Number.parseInt(b, 10));
    const want = schedule.runs.map((r) => `${r.occurrence}@${iso(r.atMs)}`);
    clockExpect(world, JSON.stringify(seen) === JSON.stringify(want), 'each scheduled run told once, at its clock instant',
      () => `schedule ${schedule.id}: ${JSON.stringify(seen)}, the model's ${JSON.stringify(want)}`);
  }
}

/** What the clock client did, for the run's last lines: a run that advanced no clock proves nothing about them. */
export function clockSummary(world: World): string {
  const clocks = world.clocks;
  if (!clocks) return 'none';
  const { stats, model } = clocks;
  const runs = model.schedules.reduce((n, s) => n + s.runs.length, 0);
  return `${clocks.ids.length} clocks, ${clocks.accounts.length} accounts, ${clocks.opIndex + 1} operations, ${stats.advances} advances (to ${model.nowMs.map(iso).join(', ')}), `
    + `${model.holds.length} holds (${stats.holdsRefused} refused, ${stats.expired} expired), ${model.quotes.length} quotes (${model.quotes.filter((q) => q.state === 'executed').length} executed, ${stats.quotesExpired} refused expired), `
    + `${model.schedules.length} schedules, ${runs} runs (${stats.runsCreated} created, ${stats.runsRefused} refused insufficient_funds)${clocks.lost ? `; stopped: ${clocks.lost}` : ''}`;
}
