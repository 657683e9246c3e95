// One Postgres connection that LISTENs on a channel, for a process that would otherwise ask
// Postgres again and again whether something changed. NOTIFY is delivered at commit, only to
// connections listening at that moment: whoever uses it must know when it may have missed one
// (`heard.listening(false)`) and ask Postgres itself until it listens again. A lost connection is
// opened again with a backoff of up to RECONNECT_MS_MAX.
import pg from 'pg';
import { log } from '../log';

const RECONNECT_MS_MIN = 500;
const RECONNECT_MS_MAX = 5_000;

export interface ChannelHearing {
  /** A notification on the channel, with its payload ('' when it had none). */
  notified(payload: string): void;
  /** Listening began (true), or ended (false): notifications from now on until it begins again are lost. */
  listening(now: boolean): void;
}

export class ChannelListener {
  private client: pg.Client | null = null;
  private stopped = false;
  private reconnectTimer: NodeJS.Timeout | undefined;

  /** `what`: the changes the channel announces, and what the process does while it does not hear them (for the log). */
  constructor(
    private readonly databaseUrl: string,
    private readonly channel: string,
    private readonly heard: ChannelHearing,
    private readonly what: { changes: string; meanwhile: string },
  ) {}

  /** Resolves after the first attempt to listen, whether it succeeded or is retried later. */
  async start(): Promise<void> {
    await this.listen(RECONNECT_MS_MIN);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.reconnectTimer);
    const client = this.client;
    this.lose();
    await client?.end().catch(() => undefined);
  }

  /** Whether every notification from now on reaches this process. */
  get listening(): boolean {
    return this.client !== null;
  }

  private async listen(retryMs: number): Promise<void> {
    if (this.stopped) return;
    const client = new pg.Client({ connectionString: this.databaseUrl, connectionTimeoutMillis: 3_000 });
    const lost = (error?: Error) => {
      if (this.client !== client) return;
      log.warn({ err: error }, `${this.what.changes} not heard: ${this.what.meanwhile} until listening again`);
      this.lose();
      client.end().catch(() => undefined);
      this.reconnectTimer = setTimeout(() => { void this.listen(RECONNECT_MS_MIN); }, retryMs);
    };
    try {
      client.on('notification', (message) => this.heard.notified(message.payload ?? ''));
      await client.connect();
      await client.query(`LISTEN ${this.channel}`);
      if (this.stopped) {
        await client.end();
        return;
      }
      client.on('error', lost);
      client.on('end', () => lost());
      this.client = client;
      this.heard.listening(true);
    } catch (error) {
      log.warn({ err: error }, `not listening for ${this.what.changes} yet: ${this.what.meanwhile} meanwhile`);
      client.end().catch(() => undefined);
      this.reconnectTimer = setTimeout(() => { void this.listen(Math.min(retryMs * 2, RECONNECT_MS_MAX)); }, retryMs);
    }
  }

  private lose(): void {
    if (this.client === null) return;
    this.client = null;
    this.heard.listening(false);
  }
}
