// Every migration runs up and down cleanly, on a database of its own.
import assert from 'node:assert/strict';
import { createDb, ensureDatabase, migrationConfig, type Db } from '../../src/db';

describe('migrations', () => {
  let db: Db;
  before(async () => {
    const url = new URL(process.env.DATABASE_URL!);
    url.pathname = `${url.pathname}_migrations`; // a database of its own, beside the run's
    await ensureDatabase(url.toString());
    db = createDb(url.toString(), 2);
    await db.migrate.rollback(migrationConfig(), true);
  });
  after(async () => db.destroy());

  const tables = async () => (await db.raw(`SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename NOT LIKE 'knex_%' ORDER BY 1`)).rows.map((r: { tablename: string }) => r.tablename);

  it('runs every migration up, all the way down, and up again', async () => {
    const [, applied] = await db.migrate.latest(migrationConfig());
    assert.ok(applied.length >= 1);
    const afterUp = await tables();
    assert.ok(afterUp.includes('accounts'));

    await db.migrate.rollback(migrationConfig(), true);
    assert.deepEqual(await tables(), []);

    await db.migrate.latest(migrationConfig());
    assert.deepEqual(await tables(), afterUp);
  });
});
