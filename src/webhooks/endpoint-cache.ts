// Each account's webhook endpoints, in memory, for the webhook dispatcher: nearly every event
// belongs to an account without endpoints, and reading Postgres for each batch of events cost
// about two and a half transactions per transfer at light load. An account's entry is dropped
// when Postgres announces a change of its endpoints (LISTEN on the channel the
// webhook_endpoint_changes trigger notifies at commit); while this process is not listening (not
// yet, or its connection broke) nothing is kept and every look-up reads Postgres, as before.
//
// What it guarantees is what the read it replaces did: an endpoint committed before its change
// reaches this process is seen; an event made in the same few milliseconds as its endpoint may or
// may not be delivered, as an event read while the endpoint's insert was in flight could be.
import pg from 'pg';
import type { Db } from '../db';
import { log } from '../log';
import type { WebhookEndpointRow } from './endpoints';

export const ENDPOINT_CHANGES_CHANNEL = 'webhook_endpoint_changes';
const RECONNECT_MS_MAX = 5_000;

export class EndpointCache {
  private readonly byAccount = new Map<string, WebhookEndpointRow[]>();
  private listener: pg.Client | null = null;
  /** Moves on with every change heard and every loss of the connection: a read that began before it is not kept. */
  private generation = 0;
  private stopped = false;
  private reconnectTimer: NodeJS.Timeout | undefined;

  constructor(private readonly db: Db, private readonly databaseUrl: string) {}

  /** Starts listening; the cache serves from memory once the LISTEN is in place. */
  async start(): Promise<void> {
    await this.listen(500);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.reconnectTimer);
    const listener = this.listener;
    this.forget();
    await listener?.end().catch(() => undefined);
  }

  /** Whether look-ups are served from memory (the process hears every change). */
  get listening(): boolean {
    return this.listener !== null;
  }

  /** The endpoints of these accounts, enabled or not. */
  async endpointsOf(accountIds: readonly string[]): Promise<WebhookEndpointRow[]> {
    // What is held is taken now: a change heard while the missing accounts are read drops its
    // account's entry, and that account must not then count as one without endpoints.
    const cached: WebhookEndpointRow[] = [];
    const missing: string[] = [];
    for (const id of new Set(accountIds)) {
      const held = this.listening ? this.byAccount.get(id) : undefined;
      if (held) cached.push(...held);
      else missing.push(id);
    }
    let loaded: WebhookEndpointRow[] = [];
    if (missing.length > 0) {
      const generation = this.generation;
      loaded = await this.db('webhook_endpoints').whereIn('account_id', missing).select('*');
      // A change heard while the read ran may not be in it: keep the read only when none was.
      if (this.listening && generation === this.generation) {
        for (const id of missing) this.byAccount.set(id, []);
        for (const row of loaded) this.byAccount.get(row.account_id)!.push(row);
      }
    }
    return [...cached, ...loaded];
  }

  private async listen(retryMs: number): Promise<void> {
    if (this.stopped) return;
    const client = new pg.Client({ connectionString: this.databaseUrl, connectionTimeoutMillis: 3_000 });
    const lost = (error?: Error) => {
      if (this.listener !== client) return;
      log.warn({ err: error }, 'webhook endpoint changes not heard: reading endpoints from Postgres until listening again');
      this.forget();
      client.end().catch(() => undefined);
      this.reconnectTimer = setTimeout(() => { void this.listen(500); }, retryMs);
    };
    try {
      client.on('notification', (message) => {
        this.generation++;
        if (message.payload) this.byAccount.delete(message.payload);
      });
      await client.connect();
      await client.query(`LISTEN ${ENDPOINT_CHANGES_CHANNEL}`);
      if (this.stopped) {
        await client.end();
        return;
      }
      client.on('error', lost);
      client.on('end', () => lost());
      this.generation++;
      this.listener = client;
    } catch (error) {
      log.warn({ err: error }, 'not listening for webhook endpoint changes yet; reading endpoints from Postgres meanwhile');
      client.end().catch(() => undefined);
      this.reconnectTimer = setTimeout(() => { void this.listen(Math.min(retryMs * 2, RECONNECT_MS_MAX)); }, retryMs);
    }
  }

  /** Not listening: nothing kept, and reads begun before now are not kept either. */
  private forget(): void {
    this.listener = null;
    this.generation++;
    this.byAccount.clear();
  }
}
