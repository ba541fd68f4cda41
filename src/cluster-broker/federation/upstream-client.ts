/**
 * What federation takes from the quorate client, in one place: `connect()` and the interfaces of
 * what it returns, from the client's own modules (not the package root, which sits above the
 * broker). The only arrow from the broker to `client/` (docs/architecture.md#layers).
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Delivery, Receiver } from '../../client/api.js';
import { Delivery as ClientDelivery } from '../../client/delivery.js';
import { ClientError } from '../../errors.js';
import { ForeignDeliveryError } from './errors.js';

export type { Connection, Delivery, Receiver } from '../../client/api.js';
export { connect } from '../../client/connection.js';

/**
 * The bytes `d`'s message arrived as (its transfer's complete payload, which the decoded message
 * was read from), so that a move passes them through instead of encoding the decoded message
 * again (copy.ts copies what it keeps of them).
 */
export function encodedMessage(d: Delivery): Uint8Array {
  const payload = d instanceof ClientDelivery ? d.transfers[0]?.payload : undefined;
  if (payload === undefined) throw new ForeignDeliveryError();
  return payload;
}

/**
 * The deliveries buffered on `receiver` (at most `max`, waiting for the first), or undefined once
 * it closed cleanly; rejects as the receiver fails. Not one at a time (`for await`): each
 * delivery handed out alone resumes its caller in a microtask of its own, after the replication
 * layer's (which sends what was proposed so far), so every local commit of a move would go to
 * the followers in an append of its own (docs/federation.md#receive-batches). A batch's moves all
 * propose in one turn: one append for all of them.
 *
 * A burst the upstream wrote at once is often read in several socket reads, all in one turn, and
 * the first read's deliveries are handed out before the next is read: so the batch is topped up
 * once, a turn later (setImmediate runs after every read of this turn's poll phase), with what
 * arrived meanwhile (docs/federation.md#burst-batches). Its moves wait that one turn at most.
 */
export async function receiveBatch(receiver: Receiver, max: number): Promise<Delivery[] | undefined> {
  const batch = await receiveBuffered(receiver, max);
  if (batch === undefined || batch.length >= max) return batch;
  await nextTurn();
  if (receiver.buffered === 0) return batch;
  const more = await receiveBuffered(receiver, max - batch.length);
  if (more !== undefined) batch.push(...more);
  return batch;
}

/** What is buffered (at most `max`, waiting for the first), or undefined once `receiver` closed cleanly. */
async function receiveBuffered(receiver: Receiver, max: number): Promise<Delivery[] | undefined> {
  try {
    return await receiver.receive({ max });
  } catch (err) {
    if (err instanceof ClientError && err.condition === 'quorate:closed') return undefined;
    throw err;
  }
}
