// Webhook endpoints of an account (DESIGN.md section 5d): the URL events are POSTed to, the
// event types it wants (none named: all of them), and its signing secret. The secret
// (`whsec_` + 32 random bytes) is shown once, when made; the database keeps it sealed. A
// rotation makes a new one and keeps the previous one signing for ROTATION_OVERLAP_MS, so a
// receiver can switch without missing a delivery.
import { randomBytes } from 'node:crypto';
import type { Db } from '../db';
import { insertOnce } from '../db/insert-once';
import { DomainError } from '../domain-error';
import { assertOwnResource } from '../http/acting-account';
import type { RouteRequest } from '../http/route';
import type { SecretVault } from '../vault';
import { wallNow } from '../clock';

export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

export interface WebhookEndpointRow {
  id: string; account_id: string; url: string; description: string | null; events: string[]; enabled: boolean;
  disabled_reason: string | null; failing_since: Date | null; secret_sealed: string; previous_secret_sealed: string | null; previous_secret_expires_at: Date | null;
  created_at: Date; updated_at: Date;
}

const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

export class WebhookEndpoints {
  constructor(private readonly db: Db, private readonly vault: SecretVault) {}

  /**
   * A new endpoint under `id` (derived from its Idempotency-Key's execution) and its secret, in the
   * clear this once; or the endpoint found made under it by an execution whose request died before
   * answering, with its secret, which no one was shown.
   */
  async create(id: string, accountId: string, fields: { url: string; events: string[]; description: string | null }): Promise<{ endpoint: WebhookEndpointRow; secret: string; created: boolean }> {
    const now = wallNow();
    const made = await insertOnce<WebhookEndpointRow>(this.db, 'webhook_endpoints', {
      id, account_id: accountId, url: fields.url, description: fields.description, events: fields.events,
      secret_sealed: this.vault.seal(newSecret()), created_at: now, updated_at: now,
    });
    return { endpoint: made.row, secret: this.vault.open(made.row.secret_sealed), created: made.created };
  }

  async byId(id: string): Promise<WebhookEndpointRow | undefined> {
    return this.db('webhook_endpoints').where('id', id).first();
  }

  query(accountId: string) {
    return this.db('webhook_endpoints').where('account_id', accountId).select('*');
  }

  async update(id: string, fields: Partial<{ url: string; events: string[]; description: string | null; enabled: boolean }>): Promise<WebhookEndpointRow> {
    const changes: Record<string, unknown> = { ...fields, updated_at: wallNow() };
    if (fields.enabled === true) Object.assign(changes, { disabled_reason: null, failing_since: null });
    if (fields.enabled === false) changes.disabled_reason = 'disabled by the account';
    const [endpoint] = await this.db('webhook_endpoints').where('id', id).update(changes).returning('*');
    return endpoint;
  }

  async delete(id: string): Promise<void> {
    await this.db('webhook_endpoints').where('id', id).delete();
  }

  /** A new secret; the current one keeps signing beside it for ROTATION_OVERLAP_MS. */
  async rotate(id: string): Promise<{ endpoint: WebhookEndpointRow; secret: string }> {
    const secret = newSecret();
    const now = wallNow();
    const [endpoint] = await this.db('webhook_endpoints').where('id', id).update({
      previous_secret_sealed: this.db.ref('secret_sealed'), previous_secret_expires_at: new Date(now.getTime() + ROTATION_OVERLAP_MS),
      secret_sealed: this.vault.seal(secret), updated_at: now,
    }).returning('*');
    return { endpoint, secret };
  }

  /** These endpoints answered 2xx: they are no longer failing. */
  async markHealthy(ids: string[]): Promise<void> {
    if (ids.length > 0) await this.db('webhook_endpoints').whereIn('id', ids).whereNotNull('failing_since').update({ failing_since: null });
  }

  /** These endpoints failed an attempt at `at`: the enabled ones failing since at or before `disableBefore`. */
  async markFailing(ids: string[], at: Date, disableBefore: Date): Promise<string[]> {
    if (ids.length === 0) return [];
    const rows: Array<{ id: string; failing_since: Date; enabled: boolean }> = await this.db('webhook_endpoints').whereIn('id', ids)
      .update({ failing_since: this.db.raw('coalesce(failing_since, ?)', [at]) }).returning(['id', 'failing_since', 'enabled']);
    return rows.filter((row) => row.enabled && row.failing_since <= disableBefore).map((row) => row.id);
  }

  /** The secrets that sign a delivery now: the current one, and the previous one during its overlap. */
  signingSecrets(endpoint: WebhookEndpointRow, now = wallNow()): string[] {
    const secrets = [this.vault.open(endpoint.secret_sealed)];
    if (endpoint.previous_secret_sealed && endpoint.previous_secret_expires_at && endpoint.previous_secret_expires_at > now) {
      secrets.push(this.vault.open(endpoint.previous_secret_sealed));
    }
    return secrets;
  }
}

/** Who manages endpoints: secret keys, webhooks-scoped restricted keys, sessions; never publishable keys. */
export const WEBHOOKS_WRITE = { kind: 'key', scope: 'webhooks:write' } as const;

export const WEBHOOKS_READ = { kind: 'key', scope: 'webhooks:read' } as const;

/** The endpoint `{id}` of the path, when it is the caller's. */
export async function ownEndpoint(endpoints: WebhookEndpoints, request: RouteRequest): Promise<WebhookEndpointRow> {
  const endpoint = await endpoints.byId(request.params.id);
  if (!endpoint) throw new DomainError('resource_not_found', 'no such webhook endpoint', request.params.id);
  assertOwnResource(request, endpoint.account_id, endpoint.id);
  return endpoint;
}
