/**
 * Local transactions, client side (AMQP 1.0 part 4): `conn.transaction(fn)` declares a
 * transaction on the coordinator link, runs `fn`, then discharges it: commit when `fn` resolves,
 * roll back when it throws.
 *
 * Never a half commit:
 * - a txn-id belongs to the physical connection that declared it; when that connection dies the
 *   broker rolls the transaction back, so the client fails it at once and ends its sends with
 *   the rollback (they are never replayed on another member by the failover journal);
 * - the commit is sent only once every send of the transaction has its outcome; a send that ended
 *   without one (deadline, abort) may be held by the broker, so the transaction can then only
 *   roll back;
 * - a commit whose answer is lost with the connection is in doubt ('quorate:in-doubt'), never
 *   reported as a success or a rollback.
 */
import type { DeliveryState } from '../codec/contract.js';
import { ArgumentTypeError, ClientError, TransactionError } from '../errors.js';
import type { ProtocolConnection } from '../protocol/index.js';
import type { ControlResult, Coordinator } from './coordinator.js';
import { Deadline } from './deadline.js';
import type { PendingSend, SendBuffer, SendWaiter } from './send-buffer.js';
import type { Transaction as PublicTransaction, TransactionOptions } from './types.js';

/**
 * open: takes sends and settlements; committing: waiting for its sends' outcomes before the
 * commit goes out; discharging: the discharge is on its way; ended: discharged or lost.
 */
type Phase = 'open' | 'committing' | 'discharging' | 'ended';

/** One transaction, handed to the function of {@link Connection.transaction}. */
export class Transaction implements PublicTransaction {
  /** The txn-id the broker's coordinator assigned. */
  readonly id: Uint8Array;
  /** @internal the transfer state of a send in this transaction. */
  readonly transferState: DeliveryState;
  private phase: Phase = 'open';
  /** Set when its connection died before the discharge went out: the broker rolled it back. */
  private lostError: TransactionError | undefined;
  /**
   * Why it may only roll back: a send ended without an outcome after it was written (the broker
   * may hold it), or a send ended without being accepted after the function returned.
   */
  private mustRollBack: Error | undefined;
  /** Its sends not yet ended, with what SendBuffer.expire needs to end them. */
  private readonly sends = new Map<PendingSend, SendWaiter>();
  private sendsEnded: (() => void) | undefined;
  private readonly commitHooks: (() => void)[] = [];

  /** @internal use Connection.transaction(). */
  constructor(
    id: Uint8Array,
    /** @internal the physical connection it was declared on (its txn-id means nothing elsewhere). */
    readonly engine: ProtocolConnection,
    private readonly buffer: SendBuffer,
  ) {
    this.id = id;
    this.transferState = { type: 'transactional-state', txnId: id };
  }

  /**
   * @internal Why a send or settlement cannot join now (undefined: it can). `engine`: the
   * physical connection it would go out on, when known.
   */
  refusal(engine?: ProtocolConnection): Error | undefined {
    if (this.lostError) return this.lostError;
    if (this.phase !== 'open')
      return new ClientError(
        'quorate:illegal-state',
        `the transaction is ${this.phase}: it takes no more work`,
      );
    if (engine !== undefined && engine !== this.engine)
      return new ClientError(
        'quorate:illegal-state',
        'the transaction was declared on another connection than the one this would go out on',
      );
    return undefined;
  }

  /** @internal the disposition state of a settlement in this transaction. */
  wrap(outcome: DeliveryState): DeliveryState {
    return { type: 'transactional-state', txnId: this.id, outcome };
  }

  /** @internal a send joined the transaction. */
  joinSend(waiter: SendWaiter): void {
    this.sends.set(waiter.ctx, waiter);
  }

  /**
   * @internal a send of this transaction ended: `accepted`, or with `error` (a refusal, or no
   * outcome: `unanswered` when it had been written).
   */
  sendEnded(ctx: PendingSend, end: { accepted: boolean; unanswered: boolean; error?: Error }): void {
    if (!this.sends.delete(ctx)) return;
    // a refusal while the function runs is the function's to handle; once it returned, nobody can
    const unseen = !end.accepted && this.phase === 'committing';
    if ((end.unanswered || unseen) && !this.mustRollBack)
      this.mustRollBack = end.error ?? new ClientError('quorate:not-accepted', 'a send was not accepted');
    if (this.sends.size === 0) this.sendsEnded?.();
  }

  /** @internal run `hook` once the broker accepted the commit. */
  afterCommit(hook: () => void): void {
    this.commitHooks.push(hook);
  }

  /** @internal its connection died: the broker rolls it back (unless the commit already went out). */
  lose(cause: Error): void {
    if (this.phase === 'discharging' || this.phase === 'ended' || this.lostError) return;
    this.lostError = new TransactionError(
      'amqp:transaction:rollback',
      'the connection was lost while the transaction was open: the broker rolled it back',
      { cause },
    );
    this.endSends(this.lostError);
  }

  /** @internal commit: resolves once the broker committed; rejects with why it did not. */
  async commit(coordinator: Coordinator, options: TransactionOptions | undefined): Promise<void> {
    if (this.lostError) throw this.lostError;
    this.phase = 'committing';
    await this.allSendsEnded(options);
    if (this.lostError) throw this.lostError;
    if (this.mustRollBack) {
      await this.rollback(coordinator, options);
      throw new TransactionError(
        'amqp:transaction:rollback',
        'rolled back instead of committed: a send of the transaction ended without its outcome, or was not accepted after the function returned',
        { cause: this.mustRollBack },
      );
    }
    // its txn-id means nothing on a connection made since (the coordinator failed over)
    if (coordinator.engine !== this.engine) {
      this.lose(new ClientError('quorate:connection-lost', 'the transaction coordinator failed over'));
      throw this.lostError;
    }
    this.phase = 'discharging';
    const r = await coordinator.discharge(this.id, false, options);
    this.phase = 'ended';
    if (r.kind === 'answered' && r.state.type === 'accepted') {
      for (const hook of this.commitHooks) hook();
      return;
    }
    throw commitError(r, () => {
      if (coordinator.engine === this.engine) void coordinator.discharge(this.id, true);
    });
  }

  /** @internal roll back; never rejects (a lost connection rolls back too). */
  async rollback(coordinator: Coordinator, options: TransactionOptions | undefined): Promise<void> {
    if (this.phase === 'discharging' || this.phase === 'ended') return;
    this.phase = 'discharging';
    this.endSends(
      new TransactionError(
        'amqp:transaction:rollback',
        'the transaction was rolled back before the send ended',
      ),
    );
    // lost: the broker rolls back with the connection; rejected: there is nothing to roll back
    // (the rollback is sent even when the caller's signal fired: only its timeout bounds the wait)
    if (!this.lostError) await coordinator.discharge(this.id, true, { timeoutMs: options?.timeoutMs });
    this.phase = 'ended';
  }

  /** @internal the error that replaces the function's own, if any: the transaction was lost. */
  get lost(): TransactionError | undefined {
    return this.lostError;
  }

  private endSends(error: Error): void {
    for (const [ctx, waiter] of [...this.sends]) this.buffer.expire(ctx, waiter, error);
  }

  /** The sends still in flight end; past the deadline they are ended (and force a rollback). */
  private allSendsEnded(options: TransactionOptions | undefined): Promise<void> {
    if (this.sends.size === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const deadline = new Deadline(options, (_reason, error) => this.endSends(error), 'commit');
      this.sendsEnded = () => {
        deadline.clear();
        resolve();
      };
      if (this.sends.size === 0) this.sendsEnded();
    });
  }
}

/** The `tx` option of a send or settlement: one of ours (behind the public interface), or none. */
export function checkTransaction(tx: PublicTransaction | undefined): Transaction | undefined {
  if (tx === undefined) return undefined;
  if (tx instanceof Transaction) return tx;
  throw new ArgumentTypeError(
    'ERR_INVALID_ARG_TYPE',
    'options.tx must be a transaction from conn.transaction()',
  );
}

/**
 * Why a commit did not succeed: refused by the broker (TransactionError with its condition),
 * lost before the discharge was written (rolled back with the connection), or lost after
 * (in doubt). `rollBack` sends a rollback for a discharge that never went out while the
 * connection lives on (its deadline passed).
 */
function commitError(r: ControlResult, rollBack: () => void): Error {
  if (r.kind === 'answered') {
    const error = r.state.type === 'rejected' ? r.state.error : undefined;
    return new TransactionError(
      error?.condition ?? 'amqp:transaction:rollback',
      `the broker refused the commit${error?.description ? `: ${error.description}` : ` (${r.state.type})`}`,
    );
  }
  if (!r.written) {
    rollBack();
    return new TransactionError(
      'amqp:transaction:rollback',
      'the commit was never sent (the connection was lost or the deadline passed first): rolled back',
      { cause: r.error },
    );
  }
  return new ClientError(
    'quorate:in-doubt',
    'the commit was sent but its answer was lost: the transaction may or may not have committed',
    { cause: r.error },
  );
}

/** What runTransaction needs from the connection. */
export interface TransactionHost {
  readonly sends: SendBuffer;
  /** Open transactions: failed by the connection when its physical connection dies. */
  readonly transactions: Set<Transaction>;
}

/**
 * Declare, run `fn`, commit or roll back (see the module comment). Rejects with the function's
 * own error after a rollback it caused, with a TransactionError when the transaction did not
 * commit for another reason (its connection was lost, the broker refused), and with a
 * ClientError 'quorate:in-doubt' when the commit's answer was lost.
 */
export async function runTransaction<R>(
  host: TransactionHost,
  coordinator: Coordinator,
  fn: (tx: PublicTransaction) => Promise<R> | R,
  options: TransactionOptions | undefined,
): Promise<R> {
  await coordinator.whenAttached(options);
  const engine = coordinator.engine;
  const declared = await coordinator.declare(options);
  if (declared.kind === 'lost' || engine === undefined || coordinator.engine !== engine) {
    // a declare without an answer holds nothing: the broker drops it with the connection
    throw new TransactionError('amqp:transaction:rollback', 'the transaction could not be declared', {
      cause: declared.kind === 'lost' ? declared.error : undefined,
    });
  }
  if (declared.state.type !== 'declared') {
    const error = declared.state.type === 'rejected' ? declared.state.error : undefined;
    throw new TransactionError(
      error?.condition ?? 'amqp:internal-error',
      `the broker refused to declare a transaction${error?.description ? `: ${error.description}` : ` (it answered ${declared.state.type})`}`,
    );
  }
  const tx = new Transaction(declared.state.txnId, engine, host.sends);
  host.transactions.add(tx);
  try {
    let value: R;
    try {
      value = await fn(tx);
    } catch (e) {
      await tx.rollback(coordinator, options);
      throw tx.lost ?? e;
    }
    await tx.commit(coordinator, options);
    return value;
  } finally {
    host.transactions.delete(tx);
  }
}
