// Test clocks as the API writes and reads them (DESIGN.md section 5i, sandbox only): a clock is
// made at a frozen time and moved forward by an advance, which this module records (the clock
// `advancing`, its target kept); the worker beside the ledger does what fell due and steps the
// clock there (consumers/ledger/clock-advance.ts, through the claims below).
import { randomUUID } from 'node:crypto';
import type { Db } from '../db';
import { DomainError } from '../domain-error';

/** The channel an advance is announced on, at its commit (migrations/20261208090000_announce_clock_advances_and_schedules.ts). */
export const TEST_CLOCK_ADVANCES_CHANNEL = 'test_clock_advances';

export const TEST_CLOCK_STATUSES = ['ready', 'advancing'] as const;
export type TestClockStatus = (typeof TEST_CLOCK_STATUSES)[number];

export interface TestClockRow {
  id: string;
  name: string | null;
  status: TestClockStatus;
  frozen_time: Date;
  advancing_to: Date | null;
  claim_id: string | null;
  claimed_until: Date | null;
  created_at: Date;
  updated_at: Date;
}

export const DAY_MS = 86_400_000;
/**
 * The furthest one advance may move a clock: two years (730 days). Every schedule runs at most 120
 * times and a hold lasts at most 30 days, so nothing a clock's accounts can make needs more in one
 * step; the bound keeps one advance's work (and a mistyped year) finite.
 */
export const ADVANCE_MAX_MS = 730 * DAY_MS;

export function testClockView(clock: TestClockRow) {
  return {
    id: clock.id, name: clock.name, status: clock.status, frozen_time: clock.frozen_time.toISOString(),
    advancing_to: clock.advancing_to ? clock.advancing_to.toISOString() : null, created_at: clock.created_at.toISOString(),
  };
}

/**
 * The target of an advance, as a clock takes it.
 * @throws DomainError invalid_request naming frozen_time: not after the clock's time, or more than ADVANCE_MAX_MS beyond it
 */
export function advanceTarget(clock: Pick<TestClockRow, 'frozen_time'>, to: Date): Date {
  if (to.getTime() <= clock.frozen_time.getTime()) {
    throw new DomainError('invalid_request', `a test clock never goes back: frozen_time must be after ${clock.frozen_time.toISOString()}`, 'frozen_time');
  }
  if (to.getTime() - clock.frozen_time.getTime() > ADVANCE_MAX_MS) {
    throw new DomainError('invalid_request', `one advance moves a clock at most ${ADVANCE_MAX_MS / DAY_MS} days (to ${new Date(clock.frozen_time.getTime() + ADVANCE_MAX_MS).toISOString()})`, 'frozen_time');
  }
  return to;
}

export class TestClocks {
  constructor(private readonly db: Db) {}

  async create(input: { frozenTime: Date; name: string | null; at: Date }): Promise<TestClockRow> {
    const [row] = await this.db('test_clocks').insert({
      id: randomUUID(), name: input.name, status: 'ready', frozen_time: input.frozenTime, created_at: input.at, updated_at: input.at,
    }).returning('*');
    return row;
  }

  async byId(id: string): Promise<TestClockRow | undefined> {
    return this.db('test_clocks').where('id', id).first();
  }

  /** Whether the account lives on the clock (its credential may read and advance it). */
  async isOnClock(accountId: string, clockId: string): Promise<boolean> {
    return Boolean(await this.db('accounts').where({ id: accountId, test_clock_id: clockId }).first('id'));
  }

  /**
   * Records an advance to `to`: the clock `advancing` until the worker has done what fell due.
   * @throws DomainError test_clock_not_found; test_clock_advancing (an advance is under way);
   * invalid_request naming frozen_time (advanceTarget)
   */
  async advance(id: string, to: Date, at: Date): Promise<TestClockRow> {
    return this.db.transaction(async (trx) => {
      const clock: TestClockRow | undefined = await trx('test_clocks').where('id', id).forUpdate().first();
      if (!clock) throw new DomainError('test_clock_not_found', 'no such test clock', id);
      if (clock.status === 'advancing') {
        throw new DomainError('test_clock_advancing', `the clock is still advancing to ${clock.advancing_to!.toISOString()}: advance it again once it is ready`, id);
      }
      const [row] = await trx('test_clocks').where('id', id)
        .update({ status: 'advancing', advancing_to: advanceTarget(clock, to), claim_id: null, claimed_until: null, updated_at: at }).returning('*');
      return row;
    });
  }
}

// The advancing worker's side (consumers/ledger/clock-advance.ts). A clock is advanced by one
// worker at a time, under a lease: claimed with FOR UPDATE SKIP LOCKED (two workers never claim
// one clock), renewed at each step, and taken over by another worker once it ran out (its worker
// died). Each write names the claim, so a worker that lost its lease changes nothing.

/** Claims one advancing clock whose lease is free or ran out, for `leaseMs` from `wallAt`. */
export async function claimAdvancingClock(db: Db, wallAt: Date, leaseMs: number): Promise<TestClockRow | undefined> {
  const { rows } = await db.raw(
    `UPDATE test_clocks SET claim_id = ?, claimed_until = ?
      WHERE id = (SELECT id FROM test_clocks WHERE status = 'advancing' AND (claimed_until IS NULL OR claimed_until < ?)
                   ORDER BY updated_at LIMIT 1 FOR UPDATE SKIP LOCKED)
      RETURNING *`,
    [randomUUID(), new Date(wallAt.getTime() + leaseMs), wallAt],
  );
  return rows[0];
}

/** Whether any clock is advancing: the worker's idle question, on the partial index. */
export async function anyClockAdvancing(db: Db): Promise<boolean> {
  const { rows } = await db.raw(`SELECT EXISTS (SELECT 1 FROM test_clocks WHERE status = 'advancing') AS advancing`);
  return rows[0].advancing;
}

/** Moves a claimed clock's time to `at` (never back) and renews the lease; false: the claim was lost. */
export async function stepClock(db: Db, clock: Pick<TestClockRow, 'id' | 'claim_id'>, at: Date, leaseUntil: Date): Promise<boolean> {
  const updated = await db('test_clocks').where({ id: clock.id, claim_id: clock.claim_id, status: 'advancing' }).andWhere('frozen_time', '<=', at)
    .update({ frozen_time: at, claimed_until: leaseUntil });
  return updated === 1;
}

/** Ends an advance: the clock ready at its target; false: the claim was lost. */
export async function finishAdvance(db: Db, clock: Pick<TestClockRow, 'id' | 'claim_id'>, wallAt: Date): Promise<boolean> {
  const updated = await db('test_clocks').where({ id: clock.id, claim_id: clock.claim_id, status: 'advancing' }).update({
    status: 'ready', frozen_time: db.raw('advancing_to'), advancing_to: null, claim_id: null, claimed_until: null, updated_at: wallAt,
  });
  return updated === 1;
}
