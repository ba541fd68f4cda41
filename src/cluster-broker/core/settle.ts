/**
 * Ending acquisitions: a consumer's settle (accepted / rejected / released / modified), a lost
 * consumer or every consumer giving back what it held (release-consumer, release-all), and the
 * hold a consumer asks for over what it gives back (hold-unsettled). Outcome rules:
 * docs/delivery-contract.md#outcomes; where failed and refused messages go: dead-letter.ts.
 */

import type { BrokerState } from './broker-state.js';
import { type DeadLettered, deadLetter, deliveryFailed, makeAvailable } from './dead-letter.js';
import type { HoldUnsettledEvent, SettleEvent } from './events.js';
import { forgetAcquired, retire } from './message-life.js';
import type { QueuedMessage } from './queued-message.js';
import type { HoldResult, ReleaseResult, SettleResult } from './results.js';

/** Why a message modified with undeliverable-here on a queue with a delivery limit was dead-lettered. */
const UNDELIVERABLE_HERE_ERROR = {
  condition: 'quorate:undeliverable-here',
  description: 'modified with undeliverable-here',
} as const;

export function settle(s: BrokerState, e: SettleEvent): SettleResult {
  const result: SettleResult = { type: 'settle', settled: [], stale: [], deadLettered: [] };
  const held = s.consumers.get(e.consumer);
  for (const seq of e.seqs) {
    const m = held?.get(seq);
    if (m === undefined) {
      result.stale.push(seq);
      continue;
    }
    const q = forgetAcquired(s, m, e.consumer, held);
    m.owner = undefined;
    result.settled.push(seq);
    const o = e.outcome;
    switch (o.type) {
      case 'accepted':
        q.uncount(m);
        retire(s, m);
        break;
      case 'rejected': {
        q.uncount(m);
        const moved = deadLetter(s, q, m, o.error);
        if (moved) result.deadLettered.push(moved);
        retire(s, m);
        break;
      }
      case 'released':
        makeAvailable(s, q, m);
        break;
      case 'modified':
        // on a queue with a delivery limit (poison handling on), undeliverable-here marks a
        // poison message: dead-lettered at once, as RabbitMQ 4 does; elsewhere it keeps the
        // spec's meaning, never again to that link (a federation link leaving a message upstream
        // relies on it) (docs/broker-features.md#delivery-limit)
        if (o.undeliverableHere && Number.isFinite(q.resolved.deliveryLimit)) {
          q.uncount(m);
          const moved = deadLetter(s, q, m, UNDELIVERABLE_HERE_ERROR);
          if (moved) result.deadLettered.push(moved);
          retire(s, m);
          break;
        }
        if (o.undeliverableHere) {
          const link = e.link ?? e.consumer;
          if (m.undeliverable === undefined) m.undeliverable = [link];
          else if (!m.undeliverable.includes(link)) m.undeliverable.push(link);
        }
        if (o.deliveryFailed) deliveryFailed(s, q, m, result.deadLettered);
        else makeAvailable(s, q, m);
        break;
    }
  }
  return result;
}

/**
 * What `consumer` held goes back (its link or connection is gone): each is a failed delivery
 * (delivery-count + 1; past the delivery limit, dead-lettered).
 */
export function releaseConsumer(s: BrokerState, consumer: string): ReleaseResult {
  const deadLettered: DeadLettered[] = [];
  const held = s.consumers.get(consumer);
  const released = held ? releaseHeld(s, [...held.values()], deadLettered) : [];
  s.holds.delete(consumer);
  return releaseResult('release-consumer', released, deadLettered);
}

/** Every consumer's acquisitions go back (release-all), each a failed delivery; holds are forgotten. */
export function releaseAll(s: BrokerState): ReleaseResult {
  const deadLettered: DeadLettered[] = [];
  const held = [...s.consumers.values()].flatMap((byConsumer) => [...byConsumer.values()]);
  const released = releaseHeld(s, held, deadLettered);
  s.holds.clear();
  return releaseResult('release-all', released, deadLettered);
}

/**
 * Gives back acquired messages, in seq order (so dead-letter seqs do not depend on which
 * consumer held what); a message whose holder asked for a hold is reserved for that link.
 * Returns the seqs available again, ascending.
 */
function releaseHeld(s: BrokerState, messages: QueuedMessage[], deadLettered: DeadLettered[]): number[] {
  const released: number[] = [];
  messages.sort((a, b) => a.seq - b.seq);
  for (const m of messages) {
    const consumer = m.owner!;
    const hold = s.holds.get(consumer);
    const q = forgetAcquired(s, m, consumer);
    m.owner = undefined;
    if (!deliveryFailed(s, q, m, deadLettered)) continue;
    released.push(m.seq);
    if (hold !== undefined) {
      m.reservation = { link: hold.link, until: s.now + hold.ms };
      q.reserved.add(m);
    }
  }
  return released;
}

export function holdUnsettled(s: BrokerState, e: HoldUnsettledEvent): HoldResult {
  if (e.ms > 0) s.holds.set(e.consumer, { link: e.link, ms: e.ms });
  else s.holds.delete(e.consumer);
  return { type: 'hold-unsettled' };
}

function releaseResult(
  type: ReleaseResult['type'],
  released: number[],
  deadLettered: DeadLettered[],
): ReleaseResult {
  return deadLettered.length > 0 ? { type, released, deadLettered } : { type, released };
}
