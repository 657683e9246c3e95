// COPY ... FROM STDIN (ledger/pg/copy.ts), the ledger's bulk write: every value comes back as it
// went in, a refused row refuses the whole statement, and the connection stays usable.
import assert from 'node:assert/strict';
import type { Knex } from 'knex';
import { copyInto, copyText } from '../../ledger/pg/copy';
import { db } from '../hooks';
import { rolledBack as rolledBackIn } from '../support/database';


const rolledBack = <T>(work: (trx: Knex.Transaction) => Promise<T>): Promise<T> => rolledBackIn(db(), work);

const COLUMNS = ['name', 'note', 'amount', 'doc', 'at'] as const;
const CREATE = 'CREATE TEMP TABLE copy_probe (name text NOT NULL, note text, amount numeric(38, 6), doc jsonb, at timestamptz) ON COMMIT DROP';

describe('COPY into a table (ledger/pg/copy.ts)', () => {
  it('writes text format: tabs, newlines and backslashes escaped, null as \\N, objects as JSON', () => {
    assert.equal(copyText(['a', 'b', 'c'], [{ a: 'x\ty\nz\\w\r', b: null, c: { k: 'v' } }]), 'x\\ty\\nz\\\\w\\r\t\\N\t{"k":"v"}\n');
  });

  it('stores every value exactly as given, in the transaction, and returns the row count', async () => {
    const rows = [
      { name: 'tab\tnewline\nreturn\rbackslash\\end', note: null, amount: '12345678901234567890.123456', doc: { nested: ['a\tb', 'c\\nd'], quote: '"' }, at: new Date('2026-11-22T10:00:00.123Z') },
      { name: '\\N is text here', note: 'naïve – ünïcode ✓', amount: '-0.000001', doc: null, at: null },
    ];
    await rolledBack(async (trx) => {
      await trx.raw(CREATE);
      assert.equal(await copyInto(trx, 'copy_probe', COLUMNS, rows), 2);
      const { rows: back } = await trx.raw('SELECT name, note, amount::text, doc, at FROM copy_probe ORDER BY amount DESC');
      assert.deepEqual(back, rows);
    });
  });

  it('a row Postgres refuses refuses the whole COPY; the transaction rolls back and the connection serves the next query', async () => {
    await rolledBack(async (trx) => {
      await trx.raw(CREATE);
      await assert.rejects(
        trx.transaction((savepoint) => copyInto(savepoint, 'copy_probe', ['name', 'amount'], [{ name: 'fine', amount: '1' }, { name: 'bad', amount: 'not a number' }])),
        { code: '22P02', message: /invalid input syntax for type numeric/ },
      );
      const { rows } = await trx.raw('SELECT count(*)::int AS n FROM copy_probe');
      assert.deepEqual(rows, [{ n: 0 }]);
    });
    const { rows } = await db().raw('SELECT 1 AS one');
    assert.deepEqual(rows, [{ one: 1 }]);
  });

  it('copies nothing, without a round trip, when there are no rows', async () => {
    await rolledBack(async (trx) => {
      assert.equal(await copyInto(trx, 'no_such_table', COLUMNS, []), 0);
    });
  });
});
