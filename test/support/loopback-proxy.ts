import { createConnection, createServer, type Server, type Socket } from 'node:net';

/**
 * The common part of the test proxies: a listener on 127.0.0.1 (a free port) in front of
 * `target`; each subclass decides what to do with a client's connection.
 */
export abstract class LoopbackProxy {
  /** Every socket open now, on either side (closed by close()). */
  protected readonly sockets = new Set<Socket>();
  private readonly server: Server;

  constructor(protected readonly target: { host: string; port: number }) {
    this.server = createServer((client) => this.accept(client));
  }

  /** Starts listening; resolves with the port. */
  listen(): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, '127.0.0.1', () => {
        const addr = this.server.address();
        if (addr === null || typeof addr === 'string') reject(new Error('no port'));
        else resolve(addr.port);
      });
    });
  }

  close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  protected abstract accept(client: Socket): void;

  /**
   * Opens the upstream connection for `client`: both tracked for close(), either one's close
   * closes the other, errors end quietly. What flows between them is the subclass's to wire.
   */
  protected linkUpstream(client: Socket): Socket {
    const upstream = createConnection(this.target);
    for (const s of [client, upstream]) {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
      s.on('error', () => undefined);
    }
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    return upstream;
  }
}
