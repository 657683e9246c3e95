// The double-entry ledger (DESIGN.md section 4), transfers and their history, the processed
// command ids that make redelivery harmless, and the outbox of events (DESIGN.md section 3).
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('ledger_accounts', (t) => {
    t.uuid('id').primary();
    t.text('code').notNullable().unique(); // acct:<account>:available:USD, sys:faucet:USD, ...
    t.uuid('account_id').references('accounts.id');
    t.text('kind').notNullable();
    t.text('currency').notNullable();
    t.decimal('balance', 38, 6).notNullable().defaultTo(0);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['account_id']);
  });
  await knex.raw(`ALTER TABLE ledger_accounts ADD CONSTRAINT ledger_accounts_kind_known CHECK (kind IN ('available', 'pending', 'system'))`);
  // A customer balance never goes below zero; system accounts (faucet equity, partner
  // settlement) may.
  await knex.raw(`ALTER TABLE ledger_accounts ADD CONSTRAINT customer_balance_never_negative CHECK (kind = 'system' OR balance >= 0)`);
  await knex.raw(`ALTER TABLE ledger_accounts ADD CONSTRAINT customer_accounts_have_owner CHECK ((kind = 'system') = (account_id IS NULL))`);

  await knex.schema.createTable('journal_entries', (t) => {
    t.uuid('id').primary();
    t.text('kind').notNullable();
    t.text('command_id').notNullable();
    t.uuid('transfer_id');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['transfer_id']);
  });

  await knex.schema.createTable('postings', (t) => {
    t.bigIncrements('seq').primary();
    t.uuid('id').notNullable().unique();
    t.uuid('entry_id').notNullable().references('journal_entries.id');
    t.uuid('ledger_account_id').notNullable().references('ledger_accounts.id');
    t.uuid('account_id');
    t.text('currency').notNullable();
    t.decimal('amount', 38, 6).notNullable(); // signed: positive raises the holder's balance
    t.decimal('balance_after', 38, 6).notNullable();
    t.uuid('transfer_id');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['ledger_account_id', 'seq']);
    t.index(['entry_id']);
  });
  await knex.raw('ALTER TABLE postings ADD CONSTRAINT postings_amount_not_zero CHECK (amount <> 0)');
  await knex.raw('CREATE INDEX postings_account_available ON postings (account_id, seq DESC) WHERE account_id IS NOT NULL');

  // Every entry balances: the postings of each entry sum to zero per currency. Checked by
  // Postgres for each INSERT statement: an entry is written whole in one statement and must
  // balance, and no later statement can add to (and so unbalance) an entry already written.
  await knex.raw(`
    CREATE FUNCTION postings_must_balance() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE unbalanced record; mismatched record;
    BEGIN
      -- A posting carries the currency and owner of the ledger account it posts to, so the
      -- per-currency sum below cannot be fooled by a mislabelled posting.
      SELECT i.id, i.currency, i.account_id, la.code INTO mismatched
        FROM inserted i JOIN ledger_accounts la ON la.id = i.ledger_account_id
        WHERE i.currency <> la.currency OR i.account_id IS DISTINCT FROM la.account_id LIMIT 1;
      IF FOUND THEN
        RAISE EXCEPTION 'posting % does not match ledger account % (posting currency %, owner %)',
          mismatched.id, mismatched.code, mismatched.currency, mismatched.account_id USING ERRCODE = 'check_violation';
      END IF;
      SELECT i.entry_id, i.currency, sum(i.amount) AS total INTO unbalanced
        FROM inserted i GROUP BY i.entry_id, i.currency HAVING sum(i.amount) <> 0 LIMIT 1;
      IF FOUND THEN
        RAISE EXCEPTION 'journal entry % does not balance in %: postings sum to %', unbalanced.entry_id, unbalanced.currency, unbalanced.total
          USING ERRCODE = 'check_violation';
      END IF;
      -- An entry's postings arrive in one statement: none may join an entry written before.
      SELECT i.entry_id INTO unbalanced
        FROM (SELECT entry_id, count(*) AS n FROM inserted GROUP BY entry_id) i
        CROSS JOIN LATERAL (SELECT count(*) AS total FROM postings p WHERE p.entry_id = i.entry_id) t
        WHERE t.total <> i.n LIMIT 1;
      IF FOUND THEN
        RAISE EXCEPTION 'journal entry % already has postings: an entry is written whole, in one statement', unbalanced.entry_id
          USING ERRCODE = 'check_violation';
      END IF;
      RETURN NULL;
    END $$;
    CREATE TRIGGER postings_balance AFTER INSERT ON postings REFERENCING NEW TABLE AS inserted
      FOR EACH STATEMENT EXECUTE FUNCTION postings_must_balance();

    -- An entry without postings is refused at commit.
    CREATE FUNCTION entry_must_have_postings() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NOT EXISTS (SELECT 1 FROM postings WHERE entry_id = NEW.id) THEN
        RAISE EXCEPTION 'journal entry % has no postings', NEW.id USING ERRCODE = 'check_violation';
      END IF;
      RETURN NULL;
    END $$;
    CREATE CONSTRAINT TRIGGER journal_entries_have_postings AFTER INSERT ON journal_entries
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION entry_must_have_postings();

    -- Append-only: a correction is a new entry, never an UPDATE or DELETE.
    CREATE FUNCTION ledger_is_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP USING ERRCODE = 'insufficient_privilege';
    END $$;
    CREATE TRIGGER postings_append_only BEFORE UPDATE OR DELETE ON postings FOR EACH ROW EXECUTE FUNCTION ledger_is_append_only();
    CREATE TRIGGER journal_entries_append_only BEFORE UPDATE OR DELETE ON journal_entries FOR EACH ROW EXECUTE FUNCTION ledger_is_append_only();
    CREATE TRIGGER postings_no_truncate BEFORE TRUNCATE ON postings FOR EACH STATEMENT EXECUTE FUNCTION ledger_is_append_only();
    CREATE TRIGGER journal_entries_no_truncate BEFORE TRUNCATE ON journal_entries FOR EACH STATEMENT EXECUTE FUNCTION ledger_is_append_only();
  `);

  await knex.schema.createTable('transfers', (t) => {
    t.uuid('id').primary();
    t.uuid('account_id').notNullable().references('accounts.id');
    t.text('command_id').notNullable().unique();
    t.text('type').notNullable();
    t.text('status').notNullable();
    t.decimal('amount', 38, 6).notNullable();
    t.text('currency').notNullable();
    t.uuid('recipient_account_id').references('accounts.id');
    t.jsonb('recipient').notNullable();
    t.text('note');
    t.text('partner');
    t.text('partner_payment_id');
    t.text('failure_code');
    t.text('failure_message');
    t.text('estimated_arrival').notNullable();
    // Every transition with its time, [{ from, to, at }, ...], appended in the transaction that makes it.
    t.jsonb('status_history').notNullable().defaultTo('[]');
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable();
    t.timestamp('completed_at', { useTz: true });
  });
  await knex.raw(`ALTER TABLE transfers ADD CONSTRAINT transfers_status_known
    CHECK (status IN ('pending', 'quoting', 'executing', 'completed', 'failed', 'rolled_back'))`);
  await knex.raw('CREATE INDEX transfers_account_created ON transfers (account_id, created_at DESC, id DESC)');

  await knex.schema.createTable('processed_commands', (t) => {
    t.text('command_id').primary();
    t.text('type').notNullable();
    t.integer('reply_status').notNullable();
    t.jsonb('reply_body').notNullable();
    t.timestamp('processed_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  // Messages written in the same transaction as the state they announce, published after
  // commit. Domain events stay here after publication: the SSE stream replays from them.
  // Publication is tracked per round (one ledger transaction), not per row: a round is listed
  // in outbox_unpublished_rounds until all its messages are acknowledged by Kafka.
  await knex.schema.createTable('outbox', (t) => {
    t.bigIncrements('seq').primary();
    t.uuid('id').notNullable().unique();
    t.uuid('round_id').notNullable().index();
    t.text('topic').notNullable();
    t.text('message_key').notNullable();
    t.uuid('account_id');
    t.jsonb('payload').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.schema.createTable('outbox_unpublished_rounds', (t) => {
    t.uuid('round_id').primary();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(`CREATE INDEX outbox_account_events ON outbox (account_id, seq) WHERE topic = 'domain.events'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('outbox_unpublished_rounds');
  await knex.schema.dropTableIfExists('outbox');
  await knex.schema.dropTableIfExists('processed_commands');
  await knex.schema.dropTableIfExists('transfers');
  await knex.raw('DROP TABLE IF EXISTS postings CASCADE');
  await knex.raw('DROP TABLE IF EXISTS journal_entries CASCADE');
  await knex.schema.dropTableIfExists('ledger_accounts');
  await knex.raw('DROP FUNCTION IF EXISTS postings_must_balance, entry_must_have_postings, ledger_is_append_only');
}
