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
import { ChannelListener } from '../db/channel-listener';
import type { Db } from '../db';
import type { WebhookEndpointRow } from './endpoints';

export const ENDPOINT_CHANGES_CHANNEL = 'webhook_endpoint_changes';

export class EndpointCache {
  private readonly byAccount = new Map<string, WebhookEndpointRow[]>();
  private readonly listener: ChannelListener;
  /** Moves on with every change heard and every start or loss of listening: a read that began before it is not kept. */
  private generation = 0;

  constructor(private readonly db: Db, databaseUrl: string) {
    this.listener = new ChannelListener(databaseUrl, ENDPOINT_CHANGES_CHANNEL, {
      notified: (accountId) => {
        this.generation++;
        if (accountId) this.byAccount.delete(accountId);
      },
      listening: () => {
        this.generation++;
        this.byAccount.clear();
      },
    }, { changes: 'webhook endpoint changes', meanwhile: 'reading endpoints from Postgres' });
  }

  /** Starts listening; the cache serves from memory once the LISTEN is in place. */
  async start(): Promise<void> {
    await this.listener.start();
  }

  async stop(): Promise<void> {
    await this.listener.stop();
  }

  /** Whether look-ups are served from memory (the process hears every change). */
  get listening(): boolean {
    return this.listener.listening;
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
}
