/**
 * Checks the delivery contract on the stream of results of the committed log (each index once,
 * in order): one owner per acquired message, settles/releases only of held messages, dedup
 * (an id enqueued at most once), and at the end no acknowledged message lost.
 */

import type { EntryOutcome } from '../../../../src/cluster-broker/cluster/cluster-state-machine.js';
import type { BrokerEvent } from '../../../../src/cluster-broker/core/events.js';

export class ContractViolation extends Error {}

type Status = { s: 'available' } | { s: 'held'; by: string } | { s: 'gone'; why: string };

export class ContractChecker {
  /** seq -> status */
  private readonly seqs = new Map<number, Status>();
  /** dedup key -> seq it was enqueued as */
  readonly enqueuedAs = new Map<string, number>();
  /** seqs removed by an accepted / rejected settle, or expired */
  readonly removed = new Set<number>();
  checked = 0;
  private lastNow = 0;

  /** One applied entry: the decoded event (undefined for cluster ops) and its outcome. */
  onResult(
    index: number,
    event: BrokerEvent | undefined,
    kind: string,
    outcome: EntryOutcome,
    now: number,
  ): void {
    this.checked = index;
    if (now < this.lastNow)
      throw new ContractViolation(`index ${index}: state time went back ${this.lastNow} -> ${now}`);
    this.lastNow = now;
    if (!outcome.ok) return;
    const r = outcome.result;
    switch (r.type) {
      case 'enqueue': {
        if (r.status !== 'enqueued' || event?.type !== 'enqueue') return;
        if (event.dedupKey !== undefined) {
          const was = this.enqueuedAs.get(event.dedupKey);
          if (was !== undefined) {
            throw new ContractViolation(
              `index ${index}: id ${event.dedupKey} enqueued twice (seq ${was}, ${r.seq})`,
            );
          }
          this.enqueuedAs.set(event.dedupKey, r.seq);
        }
        this.seqs.set(r.seq, { s: 'available' });
        return;
      }
      case 'acquire': {
        const consumer = event?.type === 'acquire' ? event.consumer : '?';
        for (const m of r.messages) {
          const st = this.seqs.get(m.seq);
          if (st?.s === 'held') {
            throw new ContractViolation(
              `index ${index}: seq ${m.seq} acquired by ${consumer} while held by ${st.by}`,
            );
          }
          if (st?.s === 'gone')
            throw new ContractViolation(`index ${index}: seq ${m.seq} acquired after ${st.why}`);
          this.seqs.set(m.seq, { s: 'held', by: consumer });
        }
        return;
      }
      case 'settle': {
        if (event?.type !== 'settle') return;
        for (const seq of r.settled) {
          const st = this.seqs.get(seq);
          if (st?.s !== 'held' || st.by !== event.consumer) {
            throw new ContractViolation(
              `index ${index}: ${event.consumer} settled seq ${seq} it did not hold (${JSON.stringify(st)})`,
            );
          }
          const o = event.outcome.type;
          if (o === 'accepted' || o === 'rejected') {
            this.seqs.set(seq, { s: 'gone', why: o });
            this.removed.add(seq);
          } else this.seqs.set(seq, { s: 'available' });
        }
        for (const d of r.deadLettered) this.seqs.set(d.newSeq, { s: 'available' });
        return;
      }
      case 'release-consumer':
      case 'release-all':
      case 'claim':
        for (const seq of r.released) {
          const st = this.seqs.get(seq);
          if (st?.s !== 'held')
            throw new ContractViolation(`index ${index}: ${kind} released seq ${seq} not held`);
          this.seqs.set(seq, { s: 'available' });
        }
        return;
      case 'expire':
        for (const seq of r.expired) {
          this.seqs.set(seq, { s: 'gone', why: 'expired' });
          this.removed.add(seq);
        }
        return;
      default:
        return;
    }
  }
}
