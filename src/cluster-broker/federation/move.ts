/**
 * Moving one upstream delivery, the same for queue and topic links (docs/federation.md#exactly-once):
 * check its route, commit the copy here, and only then accept it upstream. The order is the
 * guarantee: the copy keeps its message-id and is committed with its dedup key, so a delivery
 * re-sent after a crash of either side (the upstream redelivers what was never accepted) is
 * absorbed here as a duplicate. A message without a message-id moves at least once.
 */
import type { EnqueueResult } from '../core/results.js';
import { movedCopy } from './copy.js';
import { routeOf, routeRefusal } from './route.js';
import { type Delivery, encodedMessage } from './upstream-client.js';

/** What a move needs to know and do; the link kind supplies `commit` and `leave`. */
export interface MoveContext {
  /** Our cluster id: routes naming it are refused. */
  localClusterId: string;
  /** The upstream's cluster id (or its configured name when its Open gave none): added to the route. */
  fromClusterId: string;
  maxHops: number;
  /** Commits the encoded copy here (enqueue or publish); resolves at the commit point. */
  commit(copy: Uint8Array): Promise<EnqueueResult>;
  /** Settles a delivery whose route forbids the move (it is not copied here). */
  leave(d: Delivery): Promise<void>;
  /** Accepts a delivery committed here; resolves once the upstream confirmed it (accept-batch.ts). */
  accept(d: Delivery): Promise<void>;
  /** Waited before a delivery whose local commit was refused (a full queue) goes back upstream. */
  backoff(): Promise<void>;
}

/** What became of one delivery. */
export type MoveOutcome =
  | { kind: 'moved' }
  | { kind: 'duplicate' }
  | { kind: 'left'; refusal: string; route: string[] }
  | { kind: 'refused'; reason: string };

/** Moves `d`; rejects when the local outcome is unknown or the accept was lost (settle nothing on it). */
export async function moveDelivery(d: Delivery, c: MoveContext): Promise<MoveOutcome> {
  const m = d.message;
  const route = routeOf(m.messageAnnotations);
  const refusal = routeRefusal(route, c.localClusterId, c.maxHops);
  if (refusal !== undefined) {
    await c.leave(d);
    return { kind: 'left', refusal, route };
  }
  // the bytes it arrived as, its bare message passed through (copy.ts)
  const copy = movedCopy(encodedMessage(d), m, route, c.fromClusterId);
  const result = await c.commit(copy);
  if (result.status === 'refused') {
    // released at once it would come straight back and be refused again
    await c.backoff();
    await d.release();
    return { kind: 'refused', reason: `local commit refused: ${result.condition} ${result.description}` };
  }
  // committed here: only now may the upstream forget it
  await c.accept(d);
  return { kind: result.status === 'enqueued' ? 'moved' : 'duplicate' };
}
