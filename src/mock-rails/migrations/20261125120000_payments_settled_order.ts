// A statement page reads a day's settlements in settlement order, a page at a time after a
// cursor (settled_at, id). With id in the index the page is the next rows of one index range;
// without it, every page read and sorted the rest of the day to take its first rows.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE INDEX payments_settled_order ON mock_rails.payments (book, partner, settled_at, id) WHERE settled_at IS NOT NULL;
    DROP INDEX mock_rails.payments_settled;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE INDEX payments_settled ON mock_rails.payments (book, partner, settled_at) WHERE settled_at IS NOT NULL;
    DROP INDEX mock_rails.payments_settled_order;
  `);
}
