// A TCP proxy in front of a real dependency (Postgres, Redis, Kafka), so a test can take the dependency
// away from one service (cut: every connection dropped, new ones refused) and give it back,
// without stopping the server the rest of the suite uses.
import net from 'node:net';

export class TcpProxy {
  private readonly sockets = new Set<net.Socket>();
  private server: net.Server | null = null;
  port = 0;
  /** While set, what the target answers is thrown away: the request arrives, its reply never does. */
  dropReplies = false;

  private constructor(private readonly targetHost: string, private readonly targetPort: number) {}

  /** On a free port, or on `port` where the target advertises the proxy (Kafka's fault listener). */
  static async start(targetHost: string, targetPort: number, port = 0): Promise<TcpProxy> {
    const proxy = new TcpProxy(targetHost, targetPort);
    await proxy.listen(port);
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
      upstream.on('data', (chunk: Buffer) => { if (!this.dropReplies) client.write(chunk); });
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
  }
}
