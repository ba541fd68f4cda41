/**
 * The coordinator link (AMQP 1.0 part 4): a sending link whose target is the broker's
 * transaction coordinator. It carries `declare` and `discharge` control messages and hands back
 * the broker's answer. Unlike a Sender, nothing it sends is journaled or replayed: a txn-id
 * belongs to the connection that declared it, so a control message lost with its connection is
 * reported as lost (and whether it was written), never re-sent elsewhere.
 */
import type { AmqpErrorBody, DeliveryState } from '../codec/contract.js';
import { encodeMessage } from '../codec/message.js';
import { described, ulong } from '../codec/typed.js';
import type { AmqpValue } from '../codec/values.js';
import { ClientError } from '../errors.js';
import type { EngineEvent, OutgoingDelivery, ProtocolConnection, SenderLink } from '../protocol/index.js';
import type { Connection } from './connection.js';
import { Deadline } from './deadline.js';
import { type ClientLink, isPermanentDetach, linkError, Waiters } from './link-base.js';
import type { PhysicalConnection } from './physical.js';
import type { CallOptions } from './types.js';

/** The coordinator capability we ask for: local transactions only. */
const LOCAL_TRANSACTIONS = 'amqp:local-transactions';
const DECLARE = 0x31;
const DISCHARGE = 0x32;

/**
 * How a control message ended: the broker's answer, or no answer because the connection died
 * (or the deadline passed); `written` says whether the broker may have acted on it.
 */
export type ControlResult =
  | { kind: 'answered'; state: DeliveryState }
  | { kind: 'lost'; written: boolean; error: Error };

interface PendingControl {
  delivery: OutgoingDelivery | undefined;
  deadline: Deadline | undefined;
  finish(result: ControlResult): void;
}

type CoordinatorState = 'attaching' | 'attached' | 'detached' | 'closed';

export class Coordinator implements ClientLink {
  /** For logs: what a coordinator link is attached to. */
  readonly address = '$coordinator';
  private state: CoordinatorState = 'detached';
  private link: SenderLink | undefined;
  private tagCounter = 0;
  private readonly attachWaiters = new Waiters();
  private readonly pending = new Set<PendingControl>();
  /** Set when the link failed for good (e.g. the broker has no coordinator). */
  failure: Error | undefined;

  constructor(
    private readonly conn: Connection,
    readonly name: string,
  ) {}

  /** The engine of the physical connection the link is attached on now (txn-ids are scoped to it). */
  get engine(): ProtocolConnection | undefined {
    return this.state === 'attached' ? this.link?.session.conn : undefined;
  }

  /** Resolves once attached on a live connection. */
  whenAttached(options?: CallOptions): Promise<void> {
    if (this.state === 'attached') return Promise.resolve();
    if (this.failure) return Promise.reject(this.failure);
    return this.attachWaiters.wait(options, 'transaction coordinator attach');
  }

  /** Ask the coordinator for a new transaction; answered with `declared` (txn-id) or `rejected`. */
  declare(options?: CallOptions): Promise<ControlResult> {
    return this.control(described(ulong(DECLARE), []), options);
  }

  /** End transaction `txnId`: commit (`fail` false) or roll back; answered `accepted` or `rejected`. */
  discharge(txnId: Uint8Array, fail: boolean, options?: CallOptions): Promise<ControlResult> {
    return this.control(described(ulong(DISCHARGE), [txnId, fail]), options);
  }

  private control(body: AmqpValue, options: CallOptions | undefined): Promise<ControlResult> {
    const link = this.link;
    if (this.state !== 'attached' || !link) {
      const error =
        this.failure ??
        new ClientError('quorate:connection-lost', 'the transaction coordinator link is not attached');
      return Promise.resolve({ kind: 'lost', written: false, error });
    }
    return new Promise<ControlResult>((resolve) => {
      const p: PendingControl = {
        delivery: undefined,
        deadline: undefined,
        finish: (result) => {
          if (!this.pending.delete(p)) return;
          p.deadline?.clear();
          resolve(result);
        },
      };
      this.pending.add(p);
      p.deadline = new Deadline(
        options,
        (_reason, error) => {
          // still queued (no credit): it must never go out after its caller gave up on it
          if (p.delivery && !p.delivery.written) p.delivery.abort();
          p.finish({ kind: 'lost', written: p.delivery?.written ?? false, error });
        },
        'transaction control',
      );
      if (!this.pending.has(p)) return; // an already-aborted signal
      const d = link.send(this.nextTag(), encodeMessage({ body }), { settled: false });
      d.context = p;
      p.delivery = d;
      this.conn.kick();
    });
  }

  // ------------------------------------------------------------------ ClientLink

  /** @internal */
  shouldAttach(): boolean {
    return this.state !== 'closed' && !this.failure;
  }

  /** @internal */
  attachTo(phys: PhysicalConnection): void {
    const session = phys.engine.begin();
    const link = session.attachSender({
      name: this.name,
      source: { address: this.name },
      target: { coordinator: true, capabilities: [LOCAL_TRANSACTIONS] },
      sndSettleMode: 0,
      rcvSettleMode: 0,
    });
    link.context = this;
    session.context = this;
    this.link = link;
    this.state = 'attaching';
  }

  /** @internal */
  onEngineEvent(ev: EngineEvent): void {
    switch (ev.type) {
      case 'link-attached':
        if (ev.link !== this.link || !ev.attach.target) return; // refused: the detach follows
        this.state = 'attached';
        this.attachWaiters.resolveAll();
        return;
      case 'delivery-update': {
        const d = ev.delivery as OutgoingDelivery;
        const p = d.context as PendingControl | undefined;
        if (p && p.delivery === d && (d.remoteState || d.remoteSettled))
          p.finish({ kind: 'answered', state: d.remoteState ?? { type: 'accepted' } });
        return;
      }
      case 'link-detached':
        if (ev.link === this.link) this.onDetached(ev.error, ev.closed);
        return;
      default:
        return;
    }
  }

  /** @internal */
  onConnectionLost(error: Error): void {
    this.link = undefined;
    if (this.state !== 'closed') this.state = 'detached';
    this.loseAll(error);
  }

  /** @internal */
  fail(error: Error): void {
    if (this.state === 'closed') return;
    this.failure = error;
    this.state = 'closed';
    this.link = undefined;
    this.conn.unregister(this);
    this.loseAll(error);
    this.attachWaiters.rejectAll(error);
  }

  private onDetached(error: AmqpErrorBody | undefined, closed: boolean): void {
    const link = this.link;
    this.link = undefined;
    link?.session.end();
    this.conn.kick();
    if (this.state !== 'attached' || isPermanentDetach(error, closed)) {
      this.fail(linkError(error, 'attach of the transaction coordinator refused'));
      return;
    }
    // lost under a live connection: fail the connection over, as a Sender does (every open
    // transaction of this connection is rolled back by the broker with it)
    this.state = 'detached';
    this.conn.linkLost(this, linkError(error, 'transaction coordinator detached by the broker'));
  }

  private loseAll(error: Error): void {
    for (const p of [...this.pending])
      p.finish({ kind: 'lost', written: p.delivery?.written ?? false, error });
  }

  private nextTag(): Uint8Array {
    const tag = new Uint8Array(4);
    new DataView(tag.buffer).setUint32(0, this.tagCounter++ >>> 0);
    return tag;
  }
}
