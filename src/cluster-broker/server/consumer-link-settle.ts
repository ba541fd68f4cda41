/**
 * ConsumerLink's settlement side (consumer-link.ts): the client's dispositions become settle
 * events, batched per outcome and submitted once per microtask, or held by the transaction they
 * name; in rcv-settle-mode second our side settles once the settle event is committed.
 */
import { isTerminal, type OutgoingDelivery } from '../../protocol/index.js';
import type { SettleOutcome } from '../core/events.js';
import { ConsumerLinkFields } from './consumer-link-fields.js';
import { outcomeKey, toOutcome } from './settle-outcome.js';

/** Our settlement marker in OutgoingDelivery.context: the seq, or -1 once its outcome is taken. */
const TAKEN = -1;

export abstract class ConsumerLinkSettle extends ConsumerLinkFields {
  /** The client's disposition for one of our deliveries. */
  onUpdate(d: OutgoingDelivery): void {
    if (this.closed) return;
    const seq = d.context;
    if (typeof seq !== 'number' || seq === TAKEN) return;
    const state = d.remoteState;
    if (state?.type === 'transactional-state') {
      if (!isTerminal(state.outcome)) return;
      const txn = this.host.transactions.get(state.txnId);
      // an unknown txn-id: the outcome cannot be held anywhere; the message stays acquired until
      // this link goes (then it is released)
      if (txn === undefined) return;
      d.context = TAKEN;
      txn.settlements.push({
        consumer: this.key,
        seq,
        outcome: toOutcome(state.outcome),
        committed: () => {
          if (!d.settled && this.link.state === 'attached') {
            d.settle();
            this.host.scheduleFlush();
          }
        },
        rolledBack: () => {
          if (!this.closed) this.queueSettle(seq, { type: 'released' }, d);
        },
      });
      return;
    }
    if (!isTerminal(state) && !d.remoteSettled) return; // 'received' or nothing yet
    d.context = TAKEN;
    const outcome = toOutcome(state);
    if (outcome.type === 'accepted') this.host.ctx.activity.totals.acknowledged++;
    else if (outcome.type === 'rejected') this.host.ctx.activity.totals.rejected++;
    this.queueSettle(seq, outcome, d);
  }

  protected queueSettle(seq: number, outcome: SettleOutcome, d: OutgoingDelivery | undefined): void {
    let p = outcome === this.lastOutcome ? this.lastPending : undefined;
    if (p === undefined) {
      const k = outcomeKey(outcome);
      p = this.pending.get(k);
      if (!p) {
        p = { outcome, seqs: [], deliveries: [] };
        this.pending.set(k, p);
      }
      this.lastOutcome = outcome;
      this.lastPending = p;
    }
    p.seqs.push(seq);
    if (d && !d.settled) p.deliveries.push(d);
    if (this.settleScheduled) return;
    this.settleScheduled = true;
    queueMicrotask(() => this.flushSettles());
  }

  protected flushSettles(): void {
    this.settleScheduled = false;
    this.lastOutcome = undefined;
    this.lastPending = undefined;
    if (this.pending.size === 0) return;
    const batches = [...this.pending.values()];
    this.pending.clear();
    const { backend } = this.host.ctx;
    for (const p of batches) {
      backend
        .submit({
          type: 'settle',
          leaderTime: backend.now(),
          consumer: this.key,
          seqs: p.seqs,
          outcome: p.outcome,
        })
        .then(
          () => {
            // rcv-settle-mode second: the client waits for our settlement to confirm its outcome
            for (const d of p.deliveries) if (!d.settled) d.settle();
            if (p.deliveries.length > 0) this.host.scheduleFlush();
          },
          (err: unknown) => this.host.fail(err),
        )
        .catch((err: unknown) => this.host.internalError(err));
    }
  }
}
