/**
 * TCP transport between members. Each member listens on its own address and dials every peer's
 * address (as configured, so a test proxy may sit in between); a dialled connection carries this
 * member's messages to that peer, an accepted one carries the peer's messages to us.
 *
 * Framing: u32 big-endian length + payload. The first frame on a connection is a hello
 * (cluster id + sender id); a connection from another cluster or an unknown member is dropped.
 * Messages to a peer that is not connected are dropped (Raft retransmits), and writes of one
 * event-loop turn are coalesced into one socket write.
 */
import net from 'node:net';
import type { Logger } from './logger.js';
import type { Message } from './types.js';
import type { WireCodec } from './wire.js';

/** Where a member listens for the other members (its cluster port). */
export interface PeerAddress {
  /** Host or IP address. */
  readonly host: string;
  /** TCP port. */
  readonly port: number;
}

export interface TcpTransportOptions {
  readonly id: string;
  readonly clusterId: string;
  /** Where to listen (port 0: any free port). */
  readonly listen: PeerAddress;
  /** Address to dial for every other member. */
  readonly peers: Readonly<Record<string, PeerAddress>>;
  readonly codec: WireCodec;
  readonly onMessage: (m: Message) => void;
  readonly logger?: Logger;
  /** Reconnect backoff, ms (doubling, with jitter). Defaults 20 / 1000. */
  readonly reconnectMin?: number;
  readonly reconnectMax?: number;
  /** Largest accepted frame. Default 256 MiB. */
  readonly maxFrame?: number;
  /** Drop messages while this many bytes are queued on a socket. Default 64 MiB. */
  readonly maxQueued?: number;
}

/**
 * Splits a byte stream into length-prefixed frames. Chunks of a large frame are collected and
 * joined once, when the whole frame is there (not re-copied on every chunk).
 */
export class FrameSplitter {
  private chunks: Buffer[] = [];
  private total = 0;
  /** Bytes needed before the next frame can be cut (header, then header + body). */
  private needed = 4;
  constructor(private readonly maxFrame: number) {}

  push(chunk: Buffer, onFrame: (frame: Buffer) => void): void {
    this.chunks.push(chunk);
    this.total += chunk.length;
    if (this.total < this.needed) return;
    let buf = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.total);
    let off = 0;
    for (;;) {
      const avail = buf.length - off;
      if (avail < 4) {
        this.needed = 4;
        break;
      }
      const len = buf.readUInt32BE(off);
      if (len > this.maxFrame) throw new Error(`frame of ${len} bytes exceeds ${this.maxFrame}`);
      if (avail - 4 < len) {
        this.needed = 4 + len;
        break;
      }
      onFrame(buf.subarray(off + 4, off + 4 + len));
      off += 4 + len;
    }
    buf = buf.subarray(off);
    this.chunks = buf.length > 0 ? [buf] : [];
    this.total = buf.length;
  }
}

export function frame(payload: Uint8Array): Buffer[] {
  const head = Buffer.allocUnsafe(4);
  head.writeUInt32BE(payload.length, 0);
  return [head, Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength)];
}

class Outbound {
  socket: net.Socket | undefined;
  connected = false;
  pending: Buffer[] = [];
  flushScheduled = false;
  backoff: number;
  timer: NodeJS.Timeout | undefined;
  constructor(
    readonly peer: string,
    readonly addr: PeerAddress,
    min: number,
  ) {
    this.backoff = min;
  }
}

export class TcpTransport {
  private server: net.Server | undefined;
  private readonly out = new Map<string, Outbound>();
  private readonly inbound = new Set<net.Socket>();
  private closed = false;
  private readonly min: number;
  private readonly max: number;
  private readonly maxFrame: number;
  private readonly maxQueued: number;
  private readonly hello: Uint8Array;

  constructor(private readonly opts: TcpTransportOptions) {
    this.min = opts.reconnectMin ?? 20;
    this.max = opts.reconnectMax ?? 1000;
    this.maxFrame = opts.maxFrame ?? 256 * 1024 * 1024;
    this.maxQueued = opts.maxQueued ?? 64 * 1024 * 1024;
    this.hello = opts.codec.encodeHello({ clusterId: opts.clusterId, from: opts.id });
  }

  /** Listen and start dialling peers; resolves with the bound port. */
  async start(): Promise<number> {
    const server = net.createServer((s) => this.accept(s));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.opts.listen.port, this.opts.listen.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    server.on('error', (err) => this.opts.logger?.error?.({ err }, 'replication listener error'));
    for (const [peer, addr] of Object.entries(this.opts.peers)) {
      if (peer === this.opts.id) continue;
      const o = new Outbound(peer, addr, this.min);
      this.out.set(peer, o);
      this.dial(o);
    }
    return (server.address() as net.AddressInfo).port;
  }

  send(m: Message): void {
    const o = this.out.get(m.to);
    if (!o?.connected || !o.socket) return;
    if (o.socket.writableLength > this.maxQueued) return;
    let bytes: Uint8Array;
    try {
      bytes = this.opts.codec.encodeMessage(m);
    } catch (err) {
      this.opts.logger?.error?.({ err, type: m.type }, 'replication: cannot encode message');
      return;
    }
    o.pending.push(...frame(bytes));
    if (!o.flushScheduled) {
      o.flushScheduled = true;
      setImmediate(() => this.flush(o));
    }
  }

  /** Is there a live outbound connection to `peer`? */
  isConnected(peer: string): boolean {
    return this.out.get(peer)?.connected === true;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const o of this.out.values()) {
      if (o.timer) clearTimeout(o.timer);
      o.socket?.destroy();
    }
    for (const s of this.inbound) s.destroy();
    const server = this.server;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private flush(o: Outbound): void {
    o.flushScheduled = false;
    if (!o.connected || !o.socket || o.pending.length === 0) {
      o.pending = [];
      return;
    }
    const chunks = o.pending;
    o.pending = [];
    // corked writes go out as one writev
    o.socket.cork();
    for (const c of chunks) o.socket.write(c);
    o.socket.uncork();
  }

  private dial(o: Outbound): void {
    if (this.closed) return;
    const s = net.connect({ host: o.addr.host, port: o.addr.port });
    s.setNoDelay(true);
    o.socket = s;
    s.on('connect', () => {
      o.connected = true;
      o.backoff = this.min;
      s.write(Buffer.concat(frame(this.hello)));
      this.opts.logger?.debug?.({ peer: o.peer }, 'replication: connected');
    });
    // The peer never writes on our outbound connection; reading only detects its close.
    s.on('data', () => {});
    s.on('error', () => {});
    s.on('close', () => {
      o.connected = false;
      o.socket = undefined;
      o.pending = [];
      if (this.closed) return;
      const delay = o.backoff * (0.5 + Math.random() / 2);
      o.backoff = Math.min(o.backoff * 2, this.max);
      o.timer = setTimeout(() => {
        o.timer = undefined;
        this.dial(o);
      }, delay);
    });
  }

  private accept(s: net.Socket): void {
    if (this.closed) {
      s.destroy();
      return;
    }
    this.inbound.add(s);
    s.setNoDelay(true);
    const splitter = new FrameSplitter(this.maxFrame);
    let from: string | undefined;
    s.on('data', (chunk: Buffer) => {
      try {
        splitter.push(chunk, (f) => {
          if (from === undefined) {
            const h = this.opts.codec.decodeHello(f);
            if (
              h.clusterId !== this.opts.clusterId ||
              !(h.from in this.opts.peers) ||
              h.from === this.opts.id
            ) {
              throw new Error(`hello from ${h.from} of cluster ${h.clusterId} refused`);
            }
            from = h.from;
            return;
          }
          const m = this.opts.codec.decodeMessage(f);
          if (m.from !== from || m.to !== this.opts.id) return;
          this.opts.onMessage(m);
        });
      } catch (err) {
        this.opts.logger?.warn?.({ err, from }, 'replication: dropping connection');
        s.destroy();
      }
    });
    s.on('error', () => {});
    s.on('close', () => this.inbound.delete(s));
  }
}

/** Parse `n1=127.0.0.1:6672,n2=host:port,...` into ids and addresses. */
export function parsePeers(spec: string): Record<string, PeerAddress> {
  const out: Record<string, PeerAddress> = {};
  for (const part of spec.split(',')) {
    const p = part.trim();
    if (!p) continue;
    const eq = p.indexOf('=');
    const colon = p.lastIndexOf(':');
    if (eq <= 0 || colon <= eq) throw new Error(`bad peer "${p}" (want id=host:port)`);
    const host = p.slice(eq + 1, colon).replace(/^\[|\]$/g, '');
    const port = Number(p.slice(colon + 1));
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`bad port in "${p}"`);
    out[p.slice(0, eq)] = { host, port };
  }
  return out;
}
