/**
 * TCP transport between members. Each member listens on its own address and dials every peer's
 * address (as configured, so a test proxy may sit in between); a dialled connection carries this
 * member's messages to that peer, an accepted one carries the peer's messages to us.
 *
 * A connection starts with the mutual handshake (handshake.ts): until both sides proved the
 * cluster secret, frames larger than HANDSHAKE_MAX_FRAME are refused, and a connection that has
 * not finished within `handshakeTimeoutMs` is closed and logged with its remote address. The
 * accepted side then binds the connection to the authenticated member id: a message claiming
 * another sender (or addressed to another member) is dropped and logged. Optional mutual TLS
 * (cluster-tls.ts) wraps the whole exchange.
 *
 * Framing: framing.ts (u32 header, messages above MEMBER_MAX_FRAME cut into fragments).
 * Messages to a peer that is not connected are dropped (Raft retransmits), and writes of one
 * event-loop turn are coalesced into one socket write.
 *
 * The options are in tcp-transport-options.ts, peer addresses and their parsing in
 * peer-address.ts, a dialled connection's state and staging buffer in tcp-outbound.ts, and what
 * is logged about connections in tcp-connection-log.ts.
 */
import { constants as bufferConstants } from 'node:buffer';
import net from 'node:net';
import tls from 'node:tls';
import { backoffDelay, type ExponentialBackoff } from '../../common/backoff.js';
import type { ByteWriter } from '../../common/byte-writer.js';
import { clusterTlsClientOptions, clusterTlsServerOptions } from './cluster-tls.js';
import { ReplicationError } from './errors.js';
import { FrameSplitter, fragments, frame, MEMBER_MAX_FRAME, Reassembler } from './framing.js';
import {
  AcceptorHandshake,
  checkHandshakeName,
  DialerHandshake,
  HANDSHAKE_MAX_FRAME,
  type HandshakeParams,
} from './handshake.js';
import type { Message } from './raft/types.js';
import type { ReplicaTransport } from './replica-seams.js';
import { DropLog, ROUTINE_ERRORS, remoteOf } from './tcp-connection-log.js';
import { Outbound } from './tcp-outbound.js';
import { HANDSHAKE_TIMEOUT_MS, type TcpTransportOptions } from './tcp-transport-options.js';

export { FrameSplitter, frame } from './framing.js';
export { type PeerAddress, parsePeers } from './peer-address.js';
export { HANDSHAKE_TIMEOUT_MS, type TcpTransportOptions } from './tcp-transport-options.js';

/** Longest a staged message waits for its turn's flush while sends keep coming (ms). */
const FLUSH_WAIT_MAX_MS = 20;

export class TcpTransport implements ReplicaTransport {
  private server: net.Server | undefined;
  private readonly out = new Map<string, Outbound>();
  private readonly inbound = new Set<net.Socket>();
  private closed = false;
  /** Reconnect backoff to a member: doubling from reconnectMin to reconnectMax (jittered at use). */
  private readonly backoff: ExponentialBackoff;
  private readonly maxFrame: number;
  private readonly maxMessage: number;
  private readonly maxQueued: number;
  private readonly handshakeTimeoutMs: number;
  private readonly hs: HandshakeParams;

  constructor(private readonly opts: TcpTransportOptions) {
    this.backoff = { initialMs: opts.reconnectMin ?? 20, maxMs: opts.reconnectMax ?? 1000, factor: 2 };
    this.maxFrame = opts.maxFrame ?? MEMBER_MAX_FRAME;
    this.maxMessage = opts.maxMessage ?? bufferConstants.MAX_LENGTH;
    this.maxQueued = opts.maxQueued ?? 64 * 1024 * 1024;
    this.handshakeTimeoutMs = opts.handshakeTimeoutMs ?? HANDSHAKE_TIMEOUT_MS;
    checkHandshakeName('cluster id', opts.clusterId);
    for (const id of [opts.id, ...Object.keys(opts.peers)]) checkHandshakeName('member id', id);
    this.hs = { secret: opts.secret, clusterId: opts.clusterId, self: opts.id };
  }

  /** Listen and start dialling peers; resolves with the bound port. */
  async start(): Promise<number> {
    const tlsOpts = this.opts.tls;
    // With TLS, half of the budget for the TLS handshake and half for ours (in total within it).
    const server = tlsOpts
      ? tls.createServer(clusterTlsServerOptions(tlsOpts, this.handshakeTimeoutMs / 2), (s) =>
          this.accept(s, this.handshakeTimeoutMs / 2),
        )
      : net.createServer((s) => this.accept(s, this.handshakeTimeoutMs));
    if (server instanceof tls.Server) {
      // Reading the address now makes Node cache it on the TCP socket, so a refusal logged after
      // the socket closed (tlsClientError) still names the peer (see remoteOf).
      server.on('connection', (raw: net.Socket) => remoteOf(raw));
      server.on('tlsClientError', (err, s) =>
        this.opts.logger?.warn?.(
          { err, remote: remoteOf(s) },
          'cluster: TLS handshake with a connecting peer failed, connection closed',
        ),
      );
    }
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
      const o = new Outbound(peer, addr);
      this.out.set(peer, o);
      this.dial(o);
    }
    return (server.address() as net.AddressInfo).port;
  }

  send(m: Message): void {
    const o = this.out.get(m.to);
    if (!o?.connected || !o.socket) return;
    if (o.socket.writableLength > this.maxQueued) return;
    try {
      const encodeInto = this.opts.codec.encodeInto;
      if (encodeInto) this.stage(o, o.socket, m, encodeInto);
      else o.pending.push(...fragments(this.opts.codec.encodeMessage(m), this.maxFrame));
    } catch (err) {
      this.opts.logger?.error?.({ err, type: m.type }, 'replication: cannot encode message');
      return;
    }
    if (!o.flushScheduled) {
      o.flushScheduled = true;
      o.flushScheduledAt = performance.now();
      setImmediate(() => this.flush(o));
    } else if (performance.now() - o.flushScheduledAt >= FLUSH_WAIT_MAX_MS) {
      // one long round of I/O callbacks keeps setImmediate from running: write what waits now
      // rather than hold a leader's heartbeats past an election timeout (docs/cluster-member.md#fresh-start)
      this.flush(o);
    }
  }

  /** Writes every peer's staged messages now (the turn's scheduled flush then finds nothing). */
  flushNow(): void {
    for (const o of this.out.values()) if (o.flushScheduled) this.flush(o);
  }

  /** Encodes `m` as one frame (or, above maxFrame, fragments) at the end of the staging buffer. */
  private stage(
    o: Outbound,
    socket: net.Socket,
    m: Message,
    encodeInto: (m: Message, w: ByteWriter) => void,
  ): void {
    const w = o.staging.writer(socket);
    const start = w.pos;
    w.u32(0);
    try {
      encodeInto(m, w);
    } catch (err) {
      w.pos = start;
      throw err;
    }
    const length = w.pos - start - 4;
    if (length <= this.maxFrame) {
      w.buf.writeUInt32BE(length, start);
      return;
    }
    // a snapshot or a huge append: fragments with headers of their own, as views of the buffer
    const before = o.staging.cut(start);
    if (before) o.pending.push(before);
    o.pending.push(...fragments(w.buf.subarray(start + 4, w.pos), this.maxFrame));
    o.staging.skip();
  }

  /** Is there a live, authenticated outbound connection to `peer`? */
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
    const staged = o.staging.cut();
    if (staged) o.pending.push(staged);
    if (!o.connected || !o.socket || o.pending.length === 0) {
      o.pending = [];
      return;
    }
    const chunks = o.pending;
    o.pending = [];
    o.staging.handed();
    if (chunks.length === 1) {
      o.socket.write(chunks[0]!);
      return;
    }
    // corked writes go out as one writev
    o.socket.cork();
    for (const c of chunks) o.socket.write(c);
    o.socket.uncork();
  }

  private dial(o: Outbound): void {
    if (this.closed) return;
    const { host, port } = o.addr;
    const tlsOpts = this.opts.tls;
    const s = tlsOpts
      ? tls.connect({ host, port, ...clusterTlsClientOptions(tlsOpts) })
      : net.connect({ host, port });
    s.setNoDelay(true);
    o.socket = s;
    const hs = new DialerHandshake(this.hs, o.peer);
    const splitter = new FrameSplitter(HANDSHAKE_MAX_FRAME);
    const fail = (err: unknown, what: string): void => {
      this.opts.logger?.warn?.({ err, peer: o.peer, remote: `${host}:${port}` }, what);
      s.destroy();
    };
    const deadline = setTimeout(
      () => fail(undefined, 'cluster: handshake with a member timed out, connection closed'),
      this.handshakeTimeoutMs,
    );
    s.on(tlsOpts ? 'secureConnect' : 'connect', () => s.write(Buffer.concat(frame(hs.hello()))));
    // After the handshake the peer never writes on our outbound connection: anything is an error.
    s.on('data', (chunk: Buffer) => {
      try {
        splitter.push(chunk, (f) => {
          const step = hs.step(f);
          if (step.reply) s.write(Buffer.concat(frame(step.reply)));
          if (!step.done) return;
          clearTimeout(deadline);
          o.connected = true;
          o.failures = 0;
          this.opts.logger?.debug?.({ peer: o.peer }, 'replication: connected');
        });
      } catch (err) {
        fail(err, 'cluster: handshake with a member failed, connection closed');
      }
    });
    s.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== undefined && ROUTINE_ERRORS.has(err.code)) return;
      this.opts.logger?.warn?.(
        { err, peer: o.peer, remote: `${host}:${port}` },
        'cluster: connection to a member failed',
      );
    });
    s.on('close', () => {
      clearTimeout(deadline);
      o.connected = false;
      o.socket = undefined;
      o.pending = [];
      o.staging.drop();
      if (this.closed) return;
      const delay = backoffDelay(this.backoff, o.failures) * (0.5 + Math.random() / 2);
      o.failures++;
      o.timer = setTimeout(() => {
        o.timer = undefined;
        this.dial(o);
      }, delay);
    });
  }

  private accept(s: net.Socket, handshakeTimeoutMs: number): void {
    if (this.closed) {
      s.destroy();
      return;
    }
    this.inbound.add(s);
    s.setNoDelay(true);
    const remote = remoteOf(s);
    const log = this.opts.logger;
    const hs = new AcceptorHandshake(this.hs, (id) => Object.hasOwn(this.opts.peers, id));
    const splitter = new FrameSplitter(HANDSHAKE_MAX_FRAME);
    const reassembler = new Reassembler(this.maxMessage);
    let peer: string | undefined;
    const drops = new DropLog((fields) =>
      log?.warn?.(
        { ...fields, peer, remote },
        'cluster: dropped a message whose sender is not the authenticated member',
      ),
    );
    /** Set once this connection's failure is logged (one line per failed connection). */
    let failureLogged = false;
    const deadline = setTimeout(() => {
      failureLogged = true;
      log?.warn?.(
        { remote, claimed: hs.peer },
        'cluster: connecting peer did not authenticate in time, closed',
      );
      s.destroy();
    }, handshakeTimeoutMs);
    const onFrame = (f: Buffer, more: boolean): void => {
      if (peer === undefined) {
        const step = hs.step(f);
        if (step.reply) s.write(Buffer.concat(frame(step.reply)));
        if (!step.done) return;
        clearTimeout(deadline);
        peer = hs.peer!;
        splitter.maxFrame = this.maxFrame;
        splitter.allowFragments = true;
        log?.info?.({ peer, remote }, 'cluster: member connected');
        return;
      }
      const whole = reassembler.push(f, more);
      if (whole === undefined) return;
      const m = this.opts.codec.decodeMessage(whole);
      if (m.from !== peer || m.to !== this.opts.id) {
        drops.note({ claimed: m.from, to: m.to, type: m.type });
        return;
      }
      if (this.opts.codec.consume?.(m)) return;
      this.opts.onMessage(m);
    };
    s.on('data', (chunk: Buffer) => {
      try {
        splitter.push(chunk, onFrame);
      } catch (err) {
        const authFailure = err instanceof ReplicationError && err.condition === 'amqp:unauthorized-access';
        failureLogged = true;
        log?.warn?.(
          { err, peer, claimed: hs.peer, remote },
          peer === undefined
            ? `cluster: connecting peer ${authFailure ? 'refused' : 'sent a bad handshake'}, connection closed`
            : 'replication: dropping connection',
        );
        s.destroy();
      }
    });
    s.on('error', () => {});
    s.on('close', () => {
      clearTimeout(deadline);
      this.inbound.delete(s);
      if (peer !== undefined && !this.closed) this.opts.onPeerLost?.(peer);
      // e.g. a dialer that found we could not prove its secret (so: not the same secret)
      if (peer === undefined && !failureLogged && !this.closed) {
        log?.warn?.({ remote, claimed: hs.peer }, 'cluster: connecting peer left before authenticating');
      }
    });
  }
}
