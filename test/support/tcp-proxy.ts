// A TCP proxy in front of a real dependency (Postgres, Redis, Kafka), so a test can take the dependency
// away from one service (cut: every connection dropped, new ones refused) and give it back,
// without stopping the server the rest of the suite uses.
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

export class TcpProxy {
  private readonly sockets = new Set<net.Socket>();
  private server: net.Server | null = null;
  private releasePort: (() => void) | null = null;
  port = 0;
  /** While set, what the target answers is thrown away: the request arrives, its reply never does. */
  dropReplies = false;
  /** While above 0, what the target answers reaches the client this much later, in order (a slow network). */
  replyDelayMs = 0;

  private constructor(private readonly targetHost: string, private readonly targetPort: number) {}

  /**
   * On a free port, or on `port` where the target advertises the proxy (Kafka's fault listener).
   * A fixed port is one proxy's at a time for the whole of its life, cut and restored included
   * (the suite's files run in parallel processes): a second waits for the first to stop.
   */
  static async start(targetHost: string, targetPort: number, port = 0): Promise<TcpProxy> {
    const proxy = new TcpProxy(targetHost, targetPort);
    if (port !== 0) proxy.releasePort = await holdPort(port);
    try {
      await proxy.listen(port);
    } catch (error) {
      proxy.releasePort?.();
      throw error;
    }
    return proxy;
  }

  private listen(port: number): Promise<void> {
    const server = net.createServer((client) => {
      const upstream = net.connect(this.targetPort, this.targetHost);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => undefined);
      }
      client.pipe(upstream);
      // A delayed chunk is written at its time, and never overtaken by a later one.
      let delivered = Promise.resolve();
      let delayed = 0;
      upstream.on('data', (chunk: Buffer) => {
        if (this.dropReplies) return;
        if (this.replyDelayMs <= 0 && delayed === 0) { client.write(chunk); return; }
        const dueMs = Date.now() + this.replyDelayMs;
        delayed += 1;
        delivered = delivered
          .then(() => new Promise((resolve) => setTimeout(resolve, Math.max(0, dueMs - Date.now()))))
          .then(() => { delayed -= 1; client.write(chunk); });
      });
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        this.port = (server.address() as net.AddressInfo).port;
        resolve();
      });
    });
  }

  /** The dependency goes away: open connections break, new ones are refused. */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = null;
    for (const socket of this.sockets) socket.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** The dependency comes back on the same port. */
  async restore(): Promise<void> {
    if (!this.server) await this.listen(this.port);
  }

  async stop(): Promise<void> {
    await this.cut();
    this.releasePort?.();
    this.releasePort = null;
  }
}

/**
 * Takes the machine-wide lock of a fixed proxy port (a directory holding the holder's pid), waiting
 * up to two minutes for its holder to stop; a lock whose holder died is taken over.
 */
async function holdPort(port: number): Promise<() => void> {
  const lock = path.join(tmpdir(), `payments-test-proxy-port.${port}.lock`);
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      mkdirSync(lock);
      writeFileSync(path.join(lock, 'pid'), String(process.pid));
      return () => rmSync(lock, { recursive: true, force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    if (!holderAlive(lock)) { rmSync(lock, { recursive: true, force: true }); continue; }
    if (Date.now() > deadline) throw new Error(`port ${port} is still held by the proxy of process ${readFileSync(path.join(lock, 'pid'), 'utf8')}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

function holderAlive(lock: string): boolean {
  let pid: number;
  try {
    pid = Number(readFileSync(path.join(lock, 'pid'), 'utf8'));
  } catch {
    // Just made, its pid not yet written; or made by a process that died at once.
    try { return Date.now() - statSync(lock).mtimeMs < 5_000; } catch { return true; }
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
