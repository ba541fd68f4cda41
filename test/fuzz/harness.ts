/**
 * In-process broker for fuzzing: one shared backend and server context (as BrokerServer builds
 * them), and per case one BrokerConnection driven directly (bytes in, a fake clock, bytes out)
 * without sockets. The output is decoded with our codec so tests can read the broker's
 * Close / End / Detach conditions.
 */

import type { BrokerServerOptions } from '../../src/broker.js';
import {
  Activity,
  BrokerConnection,
  ConsumerRegistry,
  DynamicNodes,
  type LocalBackend,
  memoryBackend,
  newCounters,
  resolveServerOptions,
  type ServerContext,
} from '../../src/cluster-broker/server/index.js';
import { QueueAdmin } from '../../src/cluster-broker/server/queue-admin.js';
import { type AmqpErrorBody, decodeFrame, type Frame, type Performative } from '../../src/codec/index.js';

export type BrokerOptions = Omit<BrokerServerOptions, 'backend'>;

/** What the broker wrote, decoded: protocol headers and frames, in order. */
export type OutFrame = { kind: 'header'; id: number } | Frame | { kind: 'undecodable'; reason: string };

/** An error the broker sent on Close / End / Detach. */
export interface SentError {
  scope: 'close' | 'end' | 'detach';
  channel: number;
  error: AmqpErrorBody | undefined;
}

export class InProcessBroker {
  readonly backend: LocalBackend;
  readonly ctx: ServerContext;
  private readonly onAvailable = (q: string): void => this.ctx.consumers.available(q);
  /** Every peer ever created, for the leak check: a finished case must have ended. */
  opened = 0;

  /** Errors the broker logged at level error (a handler that threw): the why of an internal-error. */
  readonly loggedErrors: string[] = [];

  constructor(options: BrokerOptions = {}) {
    this.backend = memoryBackend({ expireIntervalMs: 60_000 });
    const logged = this.loggedErrors;
    const opts = resolveServerOptions({
      logger: {
        error(obj: unknown, msg?: string) {
          const err = (obj as { err?: { stack?: string } }).err;
          if (logged.length < 20) logged.push(`${msg ?? ''} ${err?.stack ?? JSON.stringify(obj)}`);
        },
      },
      ...options,
    });
    this.ctx = {
      backend: this.backend,
      opts,
      consumers: new ConsumerRegistry(),
      counters: newCounters(),
      activity: new Activity(),
      dynamicNodes: new DynamicNodes(this.backend, {}),
      queueAdmin: new QueueAdmin(this.backend, opts.queueDefaults),
    };
    this.backend.on('available', this.onAvailable);
  }

  peer(): Peer {
    this.opened++;
    return new Peer(this);
  }

  /** Deletes every queue but `keep` (bounds the state a long run accumulates). */
  async deleteQueuesExcept(keep: ReadonlySet<string>): Promise<void> {
    for (const q of this.backend.state.listQueues()) {
      if (keep.has(q.name)) continue;
      await this.backend.submit({ type: 'delete', leaderTime: this.backend.now(), queue: q.name });
    }
  }

  async close(): Promise<void> {
    this.backend.off('available', this.onAvailable);
    await this.backend.close();
  }
}

/** One client-side connection into the broker's connection handler. */
export class Peer {
  readonly conn: BrokerConnection;
  /**
   * Fake time runs ahead of the wall clock by what `advance()` added: the handler also arms real
   * timers for the engine's deadlines (computed against Date.now()), so the two must agree.
   */
  private offset = 0;
  private readonly out: Uint8Array[] = [];
  private outBytes = 0;
  /** takeFrames(): how many output bytes were already decoded. */
  private taken = 0;
  ended = false;

  constructor(readonly broker: InProcessBroker) {
    const self = this;
    this.conn = new BrokerConnection(
      broker.ctx,
      {
        write(chunks) {
          for (const c of chunks) {
            self.out.push(c);
            self.outBytes += c.length;
          }
        },
        end() {
          self.ended = true;
        },
      },
      Date.now(),
    );
  }

  get now(): number {
    return Date.now() + this.offset;
  }

  /** Bytes the broker wrote so far. */
  get written(): number {
    return this.outBytes;
  }

  feed(bytes: Uint8Array): void {
    this.conn.receive(bytes, this.now);
  }

  /** Advances the fake clock and runs the broker's timers (as its sweep timer would). */
  advance(ms: number): void {
    this.offset += ms;
    this.conn.tick(this.now);
  }

  /** Lets the broker's deferred work run: backend promises, then its once-per-turn flush. */
  async settle(): Promise<void> {
    await new Promise<void>((r) => setImmediate(r));
    await new Promise<void>((r) => setImmediate(r));
  }

  /** The socket went away (what BrokerServer does on 'close'). */
  drop(): void {
    this.conn.socketClosed();
  }

  /** Decodes the whole frames written since the last call (a long-lived peer's incremental view). */
  takeFrames(): OutFrame[] {
    const all = Buffer.concat(this.out);
    const res: OutFrame[] = [];
    let at = this.taken;
    while (at + 8 <= all.length) {
      const isHeader = all[at] === AMQP[0] && all[at + 1] === AMQP[1] && all[at + 2] === AMQP[2];
      const size = isHeader ? 8 : all.readUInt32BE(at);
      if (at + size > all.length) break;
      res.push(...decodeOutput([all.subarray(at, at + size)]));
      at += size;
    }
    // keep memory flat for a peer held open for a whole run
    this.out.length = 0;
    this.out.push(all.subarray(at));
    this.taken = 0;
    return res;
  }

  /** Decodes everything written so far. */
  frames(): OutFrame[] {
    return decodeOutput(this.out);
  }

  /** Errors carried by every Close / End / Detach the broker sent. */
  errors(): SentError[] {
    const res: SentError[] = [];
    for (const f of this.frames()) {
      if (f.kind !== 'amqp') continue;
      const p = f.performative;
      if (p.type === 'close' || p.type === 'end' || p.type === 'detach') {
        res.push({ scope: p.type, channel: f.channel, error: p.body.error });
      }
    }
    return res;
  }

  performatives(): Array<{ channel: number; p: Performative }> {
    const res: Array<{ channel: number; p: Performative }> = [];
    for (const f of this.frames()) if (f.kind === 'amqp') res.push({ channel: f.channel, p: f.performative });
    return res;
  }
}

const AMQP = [0x41, 0x4d, 0x51, 0x50];

/** Splits the broker's output into protocol headers and frames (the broker never lies about sizes). */
export function decodeOutput(chunks: readonly Uint8Array[]): OutFrame[] {
  const buf = Buffer.concat(chunks);
  const res: OutFrame[] = [];
  let at = 0;
  while (at + 8 <= buf.length) {
    if (
      buf[at] === AMQP[0] &&
      buf[at + 1] === AMQP[1] &&
      buf[at + 2] === AMQP[2] &&
      buf[at + 3] === AMQP[3]
    ) {
      res.push({ kind: 'header', id: buf[at + 4]! });
      at += 8;
      continue;
    }
    const size = buf.readUInt32BE(at);
    if (size < 8 || at + size > buf.length) {
      res.push({ kind: 'undecodable', reason: `frame of size ${size} at ${at} of ${buf.length}` });
      return res;
    }
    try {
      res.push(decodeFrame(buf, at, size));
    } catch (err) {
      res.push({ kind: 'undecodable', reason: String(err) });
      return res;
    }
    at += size;
  }
  if (at !== buf.length) res.push({ kind: 'undecodable', reason: `${buf.length - at} trailing bytes` });
  return res;
}
