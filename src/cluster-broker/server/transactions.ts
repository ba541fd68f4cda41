/**
 * Local transactions (AMQP 1.0 part 4): a coordinator link takes `declare` and `discharge`
 * messages; transfers and dispositions carrying `transactional-state` are held in their
 * transaction until it is discharged.
 *
 * - A transactional send is not enqueued on arrival: it is answered with transactional-state
 *   (outcome accepted) and its enqueue waits in the transaction.
 * - A transactional acceptance (or any outcome) of a message we sent keeps the message acquired
 *   by its consumer until the discharge.
 * - Commit: every held enqueue and settlement goes to the backend as ONE `commit` event (one log
 *   entry in a cluster): all or nothing across a crash or a member failure. The discharge is
 *   accepted once it is committed; rejected (`amqp:transaction:rollback`) when the commit was
 *   refused as a whole (a queue limit).
 * - Rollback (discharge with fail), or the connection ending before the discharge: the held
 *   enqueues are dropped and the held settlements become `released` (the messages are offered
 *   again, delivery-count unchanged).
 */
import { randomBytes } from 'node:crypto';
import { decodeMessage } from '../../codec/message.js';
import type { AmqpValue } from '../../codec/values.js';
import type { IncomingDelivery, ReceiverLink } from '../../protocol/index.js';
import type { EnqueueEvent, SettleEvent, SettleOutcome } from '../core/events.js';
import { RecordTooLargeError } from '../files/errors.js';
import type { LinkHandler, LinkHost } from './link-host.js';

/** What a consumer link gives a transaction for one of its settlements. */
export interface HeldSettlement {
  /** The consumer key owning the acquisition. */
  consumer: string;
  seq: number;
  outcome: SettleOutcome;
  /** After the commit: settle our side (rcv-settle-mode second). On rollback: release. */
  committed(): void;
  rolledBack(): void;
}

interface HeldEnqueue {
  event: EnqueueEvent;
}

export class Transaction {
  readonly enqueues: HeldEnqueue[] = [];
  readonly settlements: HeldSettlement[] = [];
  constructor(readonly id: Uint8Array) {}
}

const DECLARE = 0x31;
const DISCHARGE = 0x32;
const DECLARE_SYMBOL = 'amqp:declare:list';
const DISCHARGE_SYMBOL = 'amqp:discharge:list';

function hex(b: Uint8Array): string {
  return Buffer.from(b).toString('hex');
}

/** The transactions of one connection (txn-ids are scoped to the connection that declared them). */
export class TransactionRegistry {
  private readonly open = new Map<string, Transaction>();

  declare(): Transaction {
    let id: Uint8Array;
    do id = new Uint8Array(randomBytes(8));
    while (this.open.has(hex(id)));
    const t = new Transaction(id);
    this.open.set(hex(id), t);
    return t;
  }

  get(id: Uint8Array): Transaction | undefined {
    return this.open.get(hex(id));
  }

  take(id: Uint8Array): Transaction | undefined {
    const t = this.open.get(hex(id));
    if (t) this.open.delete(hex(id));
    return t;
  }

  /** The connection ended: every open transaction rolls back. */
  rollbackAll(): void {
    const all = [...this.open.values()];
    this.open.clear();
    for (const t of all) for (const s of t.settlements) s.rolledBack();
  }
}

type Control = { kind: 'declare' } | { kind: 'discharge'; txnId: Uint8Array; fail: boolean };

/** Parses a coordinator message body: described declare / discharge. */
function parseControl(bytes: Uint8Array): Control | string {
  let body: unknown;
  try {
    body = decodeMessage(bytes).body;
  } catch (err) {
    return `undecodable coordinator message: ${(err as Error).message}`;
  }
  const d = body as { type?: unknown; descriptor?: unknown; value?: unknown };
  if (d?.type !== 'described') return 'a coordinator message body must be a described declare or discharge';
  const desc = unwrapDescriptor(d.descriptor as AmqpValue);
  const fields = Array.isArray(d.value) ? (d.value as unknown[]) : [];
  if (desc === DECLARE || desc === DECLARE_SYMBOL) {
    if (fields[0] !== undefined && fields[0] !== null) return 'global transactions are not supported';
    return { kind: 'declare' };
  }
  if (desc === DISCHARGE || desc === DISCHARGE_SYMBOL) {
    const txnId = fields[0];
    if (!(txnId instanceof Uint8Array)) return 'discharge without a binary txn-id';
    return { kind: 'discharge', txnId, fail: fields[1] === true };
  }
  return `unknown coordinator message ${String(desc)}`;
}

function unwrapDescriptor(v: AmqpValue): number | string | undefined {
  if (typeof v === 'number' || typeof v === 'string') return v;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'object' && v !== null && 'value' in v) return unwrapDescriptor(v.value as AmqpValue);
  return undefined;
}

/** The coordinator link (the client's sender, our receiver): declares and discharges transactions. */
export class CoordinatorLink implements LinkHandler {
  private closed = false;

  constructor(
    private readonly host: LinkHost,
    private readonly link: ReceiverLink,
  ) {}

  start(): void {
    this.link.flow(100);
  }

  close(): void {
    this.closed = true;
  }

  onMessage(d: IncomingDelivery): void {
    const control = parseControl(d.payload);
    this.topUp();
    if (typeof control === 'string') {
      d.disposition({ type: 'rejected', error: { condition: 'amqp:decode-error', description: control } });
      return;
    }
    const txns = this.host.transactions;
    if (control.kind === 'declare') {
      d.disposition({ type: 'declared', txnId: txns.declare().id });
      return;
    }
    const t = txns.take(control.txnId);
    if (t === undefined) {
      d.disposition({
        type: 'rejected',
        error: {
          condition: 'amqp:transaction:unknown-id',
          description: 'no open transaction with this txn-id',
        },
      });
      return;
    }
    if (control.fail) {
      for (const s of t.settlements) s.rolledBack();
      d.disposition({ type: 'accepted' });
      return;
    }
    this.commit(t, d);
  }

  private commit(t: Transaction, d: IncomingDelivery): void {
    const { backend } = this.host.ctx;
    const events: Array<EnqueueEvent | SettleEvent> = t.enqueues.map((e) => e.event);
    for (const s of t.settlements) {
      events.push({ type: 'settle', leaderTime: 0, consumer: s.consumer, seqs: [s.seq], outcome: s.outcome });
    }
    backend
      .submit({ type: 'commit', leaderTime: backend.now(), events })
      .then(
        (result) => {
          if (result.status === 'refused') this.rolledBack(t, d, result.description);
          else {
            for (const s of t.settlements) s.committed();
            d.disposition({ type: 'accepted' });
          }
          this.host.scheduleFlush();
        },
        (err: unknown) => {
          // a transaction too large for one store record surely did not commit: rolled back
          if (err instanceof RecordTooLargeError) {
            this.rolledBack(t, d, err.description);
            this.host.scheduleFlush();
          } else this.host.fail(err);
        },
      )
      .catch((err: unknown) => this.host.internalError(err));
  }

  private rolledBack(t: Transaction, d: IncomingDelivery, description: string | undefined): void {
    for (const s of t.settlements) s.rolledBack();
    d.disposition({ type: 'rejected', error: { condition: 'amqp:transaction:rollback', description } });
  }

  private topUp(): void {
    if (this.closed || this.link.state !== 'attached') return;
    if (this.link.credit < 50) this.link.flow(100);
  }
}
