/**
 * In-memory drivers for engine tests: two engines piped into each other with bytes split at
 * random positions, and a raw peer that speaks hand-crafted frames.
 */
import {
  encodeAmqpFrame,
  encodeProtocolHeader,
  encodeSaslFrame,
  type Frame,
  FrameReader,
  type Performative,
  type ProtocolHeaderFrame,
  type SaslPerformative,
} from '../../src/codec/index.js';
import { seededRandom } from '../../src/common/random.js';
import {
  type EngineEvent,
  type EngineOptions,
  type LinkOptions,
  ProtocolConnection,
  type ReceiverLink,
  type SenderLink,
  type Session,
} from '../../src/protocol/index.js';

/** Small seeded PRNG so failures replay (the failover policy's generator). */
export const rng = seededRandom;

export class Peer {
  readonly events: EngineEvent[] = [];
  onEvent: ((e: EngineEvent) => void) | undefined;
  constructor(readonly engine: ProtocolConnection) {}

  drainEvents(): number {
    const evs = this.engine.pollEvents();
    for (const e of evs) {
      this.events.push(e);
      this.onEvent?.(e);
    }
    return evs.length;
  }

  of<T extends EngineEvent['type']>(type: T): Extract<EngineEvent, { type: T }>[] {
    return this.events.filter((e) => e.type === type) as Extract<EngineEvent, { type: T }>[];
  }
}

function concat(chunks: Uint8Array[]): Uint8Array {
  let n = 0;
  for (const c of chunks) n += c.length;
  const out = new Uint8Array(n);
  let o = 0;
  for (const c of chunks) {
    out.set(c, o);
    o += c.length;
  }
  return out;
}

/** Deliver bytes to an engine in random-sized pieces (1 byte up to `maxPiece`). */
export function deliver(bytes: Uint8Array, to: ProtocolConnection, r: () => number, maxPiece = 3000): void {
  let o = 0;
  while (o < bytes.length) {
    const n = 1 + Math.floor(r() * r() * maxPiece);
    to.receive(bytes.subarray(o, Math.min(bytes.length, o + n)));
    o += n;
  }
}

/** Decodes one direction of traffic for assertions about what went on the wire. */
export class Tap {
  private readonly reader = new FrameReader({ maxFrameSize: 1 << 30 });
  readonly performatives: Performative[] = [];
  /** transfer frames seen (count), for multi-frame checks */
  transfers = 0;
  heartbeats = 0;
  constructor() {
    this.reader.expectProtocolHeader();
  }
  push(b: Uint8Array): void {
    this.reader.push(b);
    for (;;) {
      const f = this.reader.next();
      if (!f) return;
      if (f.kind === 'amqp') {
        this.performatives.push(f.performative);
        if (f.performative.type === 'transfer') this.transfers++;
      } else if (f.kind === 'heartbeat') this.heartbeats++;
      else if (f.kind === 'sasl' && f.performative.type === 'sasl-outcome')
        this.reader.expectProtocolHeader();
      else if (f.kind === 'sasl' && f.performative.type === 'sasl-init') this.reader.expectProtocolHeader();
    }
  }
  of<T extends Performative['type']>(type: T): Body<T>[] {
    return this.performatives.filter((p) => p.type === type).map((p) => p.body) as Body<T>[];
  }
}

export interface Pair {
  client: Peer;
  server: Peer;
  /** What each side wrote, decoded. */
  c2s: Tap;
  s2c: Tap;
  /** Move bytes both ways until neither side has anything left to say. */
  run(maxRounds?: number): void;
  /** Bytes moved so far, client->server and server->client. */
  bytes: { c2s: number; s2c: number };
}

export function pair(
  clientOpts: Partial<EngineOptions> = {},
  serverOpts: Partial<EngineOptions> = {},
  seed = 1,
): Pair {
  const r = rng(seed);
  const client = new Peer(
    new ProtocolConnection({ role: 'client', open: { containerId: 'client' }, ...clientOpts }),
  );
  const server = new Peer(
    new ProtocolConnection({ role: 'server', open: { containerId: 'server' }, ...serverOpts }),
  );
  const bytes = { c2s: 0, s2c: 0 };
  const c2s = new Tap();
  const s2c = new Tap();
  const run = (maxRounds = 100000): void => {
    for (let i = 0; i < maxRounds; i++) {
      const ev = client.drainEvents() + server.drainEvents();
      // alternate plain and coalesced output so both paths are exercised
      const a = client.engine.takeOutput(i % 2 === 0);
      const b = server.engine.takeOutput(i % 2 === 1);
      if (ev === 0 && a.length === 0 && b.length === 0) return;
      if (a.length) {
        const buf = concat(a);
        bytes.c2s += buf.length;
        c2s.push(buf);
        deliver(buf, server.engine, r);
      }
      if (b.length) {
        const buf = concat(b);
        bytes.s2c += buf.length;
        s2c.push(buf);
        deliver(buf, client.engine, r);
      }
    }
    throw new Error('engines did not go quiet');
  };
  return { client, server, run, bytes, c2s, s2c };
}

/** Server answers every attach (echoing the termini and rcv-settle-mode) and grants credit. */
export function autoServer(p: Pair, credit = 100): void {
  p.server.onEvent = (e) => {
    if (e.type === 'attach-request') {
      const a = e.attach;
      e.link.accept({
        source: a.source,
        target: a.target,
        rcvSettleMode: a.rcvSettleMode as 0 | 1 | undefined,
      });
      if (e.link.role === 'receiver') (e.link as ReceiverLink).flow(credit);
    }
  };
}

/** Open the pair and begin one client session. */
export function openSession(p: Pair): Session {
  p.run();
  const s = p.client.engine.begin();
  p.run();
  return s;
}

/**
 * A client receiver attached (with `attach`'s options) to the auto-answering server's sending
 * link, granted `credit`: the session, the receiver and the server's sender link.
 */
export function receiverPair(p: Pair, attach: Omit<LinkOptions, 'source'>, credit: number) {
  autoServer(p);
  const s = openSession(p);
  const rcv = s.attachReceiver({ source: { address: 'q' }, ...attach });
  p.run();
  const sl = p.server.of('attach-request')[0].link as SenderLink;
  rcv.flow(credit);
  p.run();
  return { s, rcv, sl };
}

export const tag = (n: number): Uint8Array => Uint8Array.of(n >>> 24, n >>> 16, n >>> 8, n);
export const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);
export const text = (b: Uint8Array): string => new TextDecoder().decode(b);

/** A hand-driven peer: writes crafted frames into an engine and decodes what it answers. */
export class RawPeer {
  readonly reader = new FrameReader({ maxFrameSize: 1 << 24 });
  readonly frames: (Frame | ProtocolHeaderFrame)[] = [];
  constructor(readonly engine: ProtocolConnection) {
    this.reader.expectProtocolHeader();
  }
  header(id: 0 | 2 | 3 = 0): this {
    this.engine.receive(encodeProtocolHeader(id));
    return this;
  }
  bytes(b: Uint8Array): this {
    this.engine.receive(b);
    return this;
  }
  frame(channel: number, p: Performative, payload?: Uint8Array): this {
    this.engine.receive(encodeAmqpFrame(channel, p, payload));
    return this;
  }
  sasl(p: SaslPerformative): this {
    this.engine.receive(encodeSaslFrame(p));
    return this;
  }
  /** Read everything the engine wrote; returns the newly decoded frames. */
  read(): (Frame | ProtocolHeaderFrame)[] {
    const fresh: (Frame | ProtocolHeaderFrame)[] = [];
    for (const c of this.engine.takeOutput()) this.reader.push(c);
    for (;;) {
      const f = this.reader.next();
      if (!f) break;
      fresh.push(f);
      this.frames.push(f);
      if (f.kind === 'sasl' && f.performative.type === 'sasl-outcome') this.reader.expectProtocolHeader();
    }
    return fresh;
  }
  /** Performatives the engine sent so far, of one type. */
  sent<T extends Performative['type']>(type: T): Body<T>[] {
    this.read();
    const out: unknown[] = [];
    for (const f of this.frames) {
      if (f.kind === 'amqp' && f.performative.type === type) out.push(f.performative.body);
    }
    return out as Body<T>[];
  }
}

type Body<T extends Performative['type']> = Extract<Performative, { type: T }>['body'];
