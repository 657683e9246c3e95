// The pure parts of test clocks (DESIGN.md section 5i): how far an advance may move a clock
// (src/test-clocks/clocks.ts advanceTarget, refusals in the order they apply), and how an
// account's "now" is found (src/clock.ts now: its clock's time, the wall's without one, which
// clock an account is on asked once), against a database answered from memory.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { now, type ClockDb } from '../../src/clock';
import { DomainError } from '../../src/domain-error';
import { ADVANCE_MAX_MS, advanceTarget } from '../../src/test-clocks/clocks';

const clock = { frozen_time: new Date('2027-01-01T00:00:00.000Z') };
const later = (ms: number) => new Date(clock.frozen_time.getTime() + ms);

/** A database of accounts (id → clock id or null) and clocks (id → time), counting the statements asked. */
function memoryDb(accounts: Map<string, string | null>, clocks: Map<string, Date>) {
  const asked: string[] = [];
  const db: ClockDb = {
    raw: async (sql, [id]) => {
      asked.push(sql);
      if (sql.includes('FROM accounts')) return { rows: accounts.has(id) ? [{ test_clock_id: accounts.get(id) }] : [] };
      return { rows: clocks.has(id) ? [{ frozen_time: clocks.get(id) }] : [] };
    },
  };
  return { db, asked };
}

describe('test clocks', () => {
  it('advance a clock forward only, at most ADVANCE_MAX_MS at once, refusals naming frozen_time', () => {
    const table: Array<[string, Date, string | null]> = [
      ['back in time', later(-1), 'a test clock never goes back'],
      ['to the same instant', later(0), 'a test clock never goes back'],
      ['a millisecond on', later(1), null],
      ['the longest advance', later(ADVANCE_MAX_MS), null],
      ['a millisecond beyond it', later(ADVANCE_MAX_MS + 1), 'one advance moves a clock at most 730 days'],
    ];
    for (const [what, to, refusal] of table) {
      if (refusal === null) {
        assert.equal(advanceTarget(clock, to), to, what);
        continue;
      }
      assert.throws(() => advanceTarget(clock, to), (error: unknown) => error instanceof DomainError && error.code === 'invalid_request'
        && error.details === 'frozen_time' && error.message.startsWith(refusal), what);
    }
  });

  it('reads an account\'s now on its clock, the wall\'s without one, and asks which clock an account is on once', async () => {
    const [clockId, onClock, onWall, unknown] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    const clocks = new Map([[clockId, new Date('2030-02-03T04:05:06.000Z')]]);
    const { db, asked } = memoryDb(new Map([[onClock, clockId], [onWall, null]]), clocks);
    assert.equal((await now(db, onClock)).toISOString(), '2030-02-03T04:05:06.000Z');
    clocks.set(clockId, new Date('2030-03-01T00:00:00.000Z')); // advanced: read again, never cached
    assert.equal((await now(db, onClock)).toISOString(), '2030-03-01T00:00:00.000Z');
    for (const account of [onWall, unknown, 'not-a-uuid']) {
      const before = Date.now();
      const at = (await now(db, account)).getTime();
      assert.ok(at >= before && at <= Date.now(), `${account}: the wall's time`);
    }
    await now(db, onWall);
    assert.equal(asked.filter((sql) => sql.includes('FROM accounts')).length, 3, 'the clock of each known account asked once; an unknown one each time, and a malformed id never');
  });
});
