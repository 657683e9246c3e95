// Every change of a webhook endpoint is announced on the `webhook_endpoint_changes` channel with its
// account id, in the transaction that makes it (NOTIFY is sent at commit). The webhook dispatcher
// keeps each account's endpoints in memory and drops an account's entry when its change arrives
// (src/webhooks/endpoint-cache.ts), so the events of the accounts without endpoints (nearly all
// of them) cost it no query.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE FUNCTION announce_webhook_endpoint_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('webhook_endpoint_changes', COALESCE(NEW.account_id, OLD.account_id)::text);
      RETURN NULL;
    END $$`);
  await knex.raw(`CREATE TRIGGER webhook_endpoint_changes AFTER INSERT OR UPDATE OR DELETE ON webhook_endpoints
    FOR EACH ROW EXECUTE FUNCTION announce_webhook_endpoint_change()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER webhook_endpoint_changes ON webhook_endpoints');
  await knex.raw('DROP FUNCTION announce_webhook_endpoint_change()');
}
