/**
 * Which queues an applied event made messages available in: the server pumps the consumers
 * waiting on them. Shared by every backend (a cluster member calls it for each entry it applies,
 * whoever proposed it).
 *
 * Use: `const before = queuesHeldBy(state, event)` BEFORE applying, then
 * `forEachAvailableQueue(event, result, before, state, visit)` after.
 */
import type { BrokerState } from './broker-state.js';
import type { BrokerEvent } from './events.js';
import type { ApplyResult } from './results.js';

/** The answer for most events: one shared array, not one per applied entry. */
const NONE: readonly string[] = Object.freeze([]);

/** Queues holding messages the event's consumer acquired (settle / release-consumer), before apply. */
export function queuesHeldBy(state: BrokerState, event: BrokerEvent): readonly string[] {
  if (event.type === 'commit') return [...new Set(event.events.flatMap((e) => queuesHeldBy(state, e)))];
  if (event.type !== 'settle' && event.type !== 'release-consumer') return NONE;
  if (event.type === 'settle' && (event.outcome.type === 'accepted' || event.outcome.type === 'rejected'))
    return NONE;
  const held = state.consumers.get(event.consumer);
  if (!held) return NONE;
  const names = new Set<string>();
  if (event.type === 'settle') {
    for (const seq of event.seqs) {
      const m = held.get(seq);
      if (m) names.add(m.queue.name);
    }
  } else {
    for (const m of held.values()) names.add(m.queue.name);
  }
  return [...names];
}

/**
 * Calls `visit` with each queue in which `event` (already applied, with `result`) made messages
 * available. A plain enqueue, once per message on every member, names its queue without an array
 * being made for it; the rarer events go through `otherAvailableQueues`.
 */
export function forEachAvailableQueue(
  event: BrokerEvent,
  result: ApplyResult,
  heldBefore: readonly string[],
  state: BrokerState,
  visit: (queue: string) => void,
): void {
  if (result.type === 'enqueue') {
    // a publish to a topic: the subscriptions that got it (docs/topics.md)
    if (result.status !== 'enqueued' || event.type !== 'enqueue') return;
    if (result.fannedOut === undefined) visit(event.queue);
    else for (const q of result.fannedOut) visit(q);
    return;
  }
  for (const q of otherAvailableQueues(event, result, heldBefore, state)) visit(q);
}

/** Every event but an enqueue: each queue named once. */
function otherAvailableQueues(
  event: BrokerEvent,
  result: ApplyResult,
  heldBefore: readonly string[],
  state: BrokerState,
): Iterable<string> {
  switch (result.type) {
    case 'commit': {
      if (result.status !== 'committed' || event.type !== 'commit') return NONE;
      const out = new Set<string>();
      const add = (q: string): void => {
        out.add(q);
      };
      event.events.forEach((e, i) => {
        forEachAvailableQueue(e, result.results[i]!, heldBefore, state, add);
      });
      return out;
    }
    case 'settle': {
      const out = new Set<string>();
      if (result.settled.length > 0) for (const q of heldBefore) out.add(q);
      for (const d of result.deadLettered) out.add(d.queue);
      return out;
    }
    case 'release-consumer': {
      const out = new Set<string>(result.released.length > 0 ? heldBefore : NONE);
      for (const d of result.deadLettered ?? []) out.add(d.queue);
      return out;
    }
    case 'release-all':
      return result.released.length > 0 || result.deadLettered !== undefined
        ? state
            .listQueues()
            .filter((q) => q.available > 0)
            .map((q) => q.name)
        : NONE;
    default:
      return NONE;
  }
}
