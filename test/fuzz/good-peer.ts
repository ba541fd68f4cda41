/**
 * A well-behaved client connection held open across a whole fuzz run (in process): it publishes a
 * message and receives it back on demand, proving that hostile connections around it changed
 * nothing for others.
 */
import { decodeMessage, type Frame } from '../../src/codec/index.js';
import type { InProcessBroker, Peer } from './harness.js';
import * as S from './script.js';

export class GoodPeer {
  private readonly peer: Peer;
  private sent = 0;
  private received = 0;
  /** The broker's delivery ids we have not settled yet. */
  roundTrips = 0;

  private constructor(
    broker: InProcessBroker,
    readonly queue: string,
  ) {
    this.peer = broker.peer();
  }

  static async open(broker: InProcessBroker, queue: string): Promise<GoodPeer> {
    const g = new GoodPeer(broker, queue);
    g.peer.feed(
      S.concat([
        S.SASL_HEADER,
        S.saslInit(),
        S.AMQP_HEADER,
        // its own container-id and link names: a fuzz case re-using them would steal its links
        S.open('good-peer'),
        S.begin(0),
        S.attachSender(0, 0, queue, 'good-sender'),
        S.attachReceiver(0, 1, queue, 'good-receiver'),
      ]),
    );
    await g.peer.settle();
    g.peer.feed(S.flow(0, 1, 100));
    await g.peer.settle();
    const attaches = g.peer.takeFrames().filter((f) => f.kind === 'amqp' && f.performative.type === 'attach');
    if (attaches.length !== 2) throw new Error(`good peer: expected 2 attaches, got ${attaches.length}`);
    return g;
  }

  /** Sends one message, waits until the broker accepted it and delivered it back; accepts it. */
  async roundTrip(): Promise<void> {
    if (this.peer.ended) throw new Error('good peer: the broker ended its connection');
    const id = this.sent++;
    const body = `${this.queue}-${id}`;
    this.peer.feed(S.transfer(0, 0, id, S.message(body)));
    let accepted = false;
    let delivered: { id: number; body: unknown } | undefined;
    for (let i = 0; i < 50 && !(accepted && delivered); i++) {
      await this.peer.settle();
      for (const f of this.peer.takeFrames()) {
        const problem = this.check(f, id);
        if (problem) throw new Error(`good peer: ${problem}`);
        if (f.kind !== 'amqp') continue;
        const p = f.performative;
        if (
          p.type === 'disposition' &&
          p.body.role &&
          p.body.first <= id &&
          (p.body.last ?? p.body.first) >= id
        ) {
          if (p.body.state?.type !== 'accepted')
            throw new Error(`good peer: send settled ${p.body.state?.type}`);
          accepted = true;
        }
        if (p.type === 'transfer' && f.payload) {
          delivered = { id: p.body.deliveryId!, body: decodeMessage(f.payload).body };
        }
      }
    }
    if (!accepted) throw new Error('good peer: no accepted disposition for its send');
    if (!delivered) throw new Error('good peer: its message was not delivered back');
    if (delivered.body !== body) throw new Error(`good peer: got ${String(delivered.body)}, sent ${body}`);
    this.received++;
    this.peer.feed(S.concat([S.accept(0, delivered.id, delivered.id), this.window()]));
    await this.peer.settle();
    this.roundTrips++;
  }

  /** An empty frame: the healthy peer is not idle (the broker's idle timer runs on the wall clock). */
  heartbeat(): void {
    this.peer.feed(Uint8Array.of(0, 0, 0, 8, 2, 0, 0, 0));
  }

  get ended(): boolean {
    return this.peer.ended;
  }

  close(): void {
    this.peer.feed(S.close());
  }

  /** Re-opens our session window and tops up credit. */
  private window(): Uint8Array {
    return S.frame(0, {
      type: 'flow',
      body: {
        nextIncomingId: this.received,
        incomingWindow: 100,
        nextOutgoingId: this.sent,
        outgoingWindow: 100,
        handle: 1,
        deliveryCount: this.received,
        linkCredit: 100,
      },
    });
  }

  private check(f: Frame | { kind: string }, id: number): string | undefined {
    if (f.kind === 'undecodable') return 'undecodable output';
    if (f.kind !== 'amqp') return undefined;
    const p = (f as Extract<Frame, { kind: 'amqp' }>).performative;
    if (p.type === 'close' || p.type === 'end' || p.type === 'detach')
      return `broker sent ${p.type} ${JSON.stringify(p.body)} during round trip ${id}`;
    return undefined;
  }
}
