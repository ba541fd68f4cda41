/**
 * A raw AMQP peer over TCP for hostile-input tests: writes whatever bytes it is told, decodes
 * what the broker answers (protocol headers and frames) with our codec's FrameReader.
 */
import net from 'node:net';
import {
  type AmqpErrorBody,
  encodeAmqpFrame,
  encodeProtocolHeader,
  FrameReader,
  type Performative,
} from '../../../src/codec/index.js';

export interface Seen {
  kind: string;
  type?: string;
  channel?: number;
  error?: AmqpErrorBody;
}

export class RawPeer {
  readonly seen: Seen[] = [];
  ended = false;
  private readonly reader = new FrameReader({ maxFrameSize: 16 * 1024 * 1024 });
  private waiters: (() => void)[] = [];

  private constructor(readonly socket: net.Socket) {
    this.reader.expectProtocolHeader();
    socket.on('data', (d: Buffer) => {
      this.reader.push(d);
      try {
        for (let f = this.reader.next(); f !== undefined; f = this.reader.next()) {
          if (f.kind === 'protocol-header') {
            this.seen.push({ kind: 'header' });
            continue;
          }
          if (f.kind === 'amqp') {
            const body = f.performative.body as { error?: AmqpErrorBody };
            const s: Seen = { kind: 'amqp', type: f.performative.type, channel: f.channel };
            if (body?.error) s.error = body.error;
            this.seen.push(s);
          } else this.seen.push({ kind: f.kind });
        }
      } catch {
        this.seen.push({ kind: 'undecodable' });
      }
      this.wake();
    });
    const end = () => {
      this.ended = true;
      this.wake();
    };
    socket.on('end', end);
    socket.on('close', end);
    socket.on('error', () => {});
  }

  static connect(port: number): Promise<RawPeer> {
    return new Promise((resolve, reject) => {
      const s = net.connect(port, '127.0.0.1', () => resolve(new RawPeer(s)));
      s.once('error', reject);
    });
  }

  write(bytes: Uint8Array): void {
    if (!this.socket.destroyed) this.socket.write(bytes);
  }

  /** Bare AMQP header (no SASL) and an Open. */
  async open(containerId = 'raw'): Promise<void> {
    this.write(encodeProtocolHeader(0));
    this.frame(0, { type: 'open', body: { containerId } });
    await this.until((s) => s.type === 'open', 5000);
  }

  frame(channel: number, p: Performative, payload?: Uint8Array): void {
    this.write(encodeAmqpFrame(channel, p, payload));
  }

  /** Waits for a frame matching `pred`; resolves with it. */
  async until(pred: (s: Seen) => boolean, timeoutMs: number): Promise<Seen> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const hit = this.seen.find(pred);
      if (hit) return hit;
      if (this.ended) throw new Error(`connection ended; saw ${JSON.stringify(this.seen)}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out; saw ${JSON.stringify(this.seen)}`);
      await new Promise<void>((r) => {
        const t = setTimeout(r, left);
        this.waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
  }

  /** Waits until the broker ended the socket. */
  async untilEnded(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.ended) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`socket still open; saw ${JSON.stringify(this.seen)}`);
      await new Promise<void>((r) => {
        const t = setTimeout(r, left);
        this.waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
  }

  destroy(): void {
    this.socket.destroy();
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }
}
