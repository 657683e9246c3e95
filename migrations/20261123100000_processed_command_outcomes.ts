// processed_commands keeps what the ledger decided in its own terms (ledger/outcome.ts), not an
// HTTP status and body: the HTTP layer alone maps outcomes to answers. Stored replies become
// outcomes: a refusal keeps its code, message and field; an accepted transfer carries its record
// as stored; a faucet credit its amounts.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('processed_commands', (t) => { t.jsonb('outcome'); });
  await knex.raw(`
    UPDATE processed_commands SET outcome = jsonb_build_object(
      'kind', 'refused', 'code', reply_body->>'error', 'message', reply_body->>'message', 'field', reply_body->'details')
    WHERE reply_status >= 400`);
  await knex.raw(`
    UPDATE processed_commands pc SET outcome = jsonb_build_object(
      'kind', 'transfer', 'created', pc.reply_status = 201,
      'transfer', (to_jsonb(t) - 'status_history') || jsonb_build_object('amount', t.amount::text))
    FROM transfers t
    WHERE pc.reply_status < 400 AND t.id = (pc.reply_body->>'transfer_id')::uuid`);
  await knex.raw(`
    UPDATE processed_commands SET outcome = jsonb_build_object(
      'kind', 'faucet_credit', 'entry_id', reply_body->>'id', 'account_id', reply_body->>'account_id',
      'currency', reply_body->>'currency', 'amount', reply_body->>'amount',
      'available', reply_body->'balance'->>'available', 'pending', reply_body->'balance'->>'pending')
    WHERE reply_status < 400 AND type = 'faucet.credit'`);
  const { rows } = await knex.raw('SELECT command_id FROM processed_commands WHERE outcome IS NULL LIMIT 10');
  if (rows.length > 0) throw new Error(`processed commands with a reply no outcome describes: ${rows.map((r: { command_id: string }) => r.command_id).join(', ')}`);
  await knex.schema.alterTable('processed_commands', (t) => {
    t.dropColumn('reply_status');
    t.dropColumn('reply_body');
  });
  await knex.raw('ALTER TABLE processed_commands ALTER COLUMN outcome SET NOT NULL');
}

// Back to statuses and bodies. A refusal and a faucet credit get the bodies they had; an accepted
// transfer comes back as its record with its transfer_id (not the API view it had), which `up`
// turns into an outcome again.
export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('processed_commands', (t) => {
    t.integer('reply_status');
    t.jsonb('reply_body');
  });
  await knex.raw(`
    UPDATE processed_commands SET
      reply_status = CASE outcome->>'kind'
        WHEN 'refused' THEN CASE outcome->>'code'
          WHEN 'account_not_active' THEN 403 WHEN 'resource_not_found' THEN 404 WHEN 'transfer_not_found' THEN 404
          WHEN 'external_send_blocked' THEN 400 WHEN 'invalid_request' THEN 400 ELSE 422 END
        WHEN 'transfer' THEN CASE WHEN (outcome->>'created')::boolean THEN 201 ELSE 200 END
        ELSE 201 END,
      reply_body = CASE outcome->>'kind'
        WHEN 'refused' THEN jsonb_build_object('success', false, 'error', outcome->>'code', 'message', outcome->>'message', 'details', outcome->'field')
        WHEN 'transfer' THEN (outcome->'transfer') || jsonb_build_object('transfer_id', outcome->'transfer'->'id')
        ELSE jsonb_build_object('id', outcome->'entry_id', 'account_id', outcome->'account_id', 'currency', outcome->'currency', 'amount', outcome->'amount',
          'balance', jsonb_build_object('currency', outcome->'currency', 'available', outcome->'available', 'pending', outcome->'pending')) END`);
  await knex.raw('ALTER TABLE processed_commands ALTER COLUMN reply_status SET NOT NULL, ALTER COLUMN reply_body SET NOT NULL');
  await knex.schema.alterTable('processed_commands', (t) => { t.dropColumn('outcome'); });
}
