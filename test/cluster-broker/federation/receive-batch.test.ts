/**
 * The link's receive batches (docs/federation.md#burst-batches): a burst read in several socket
 * reads of one turn is handed out as one batch, so its moves are proposed together; a batch waits
 * one turn at most for it.
 */
import { describe, expect, it } from 'vitest';
import type { Delivery, Receiver } from '../../../src/cluster-broker/federation/upstream-client.js';
import { receiveBatch } from '../../../src/cluster-broker/federation/upstream-client.js';

/** A receiver's buffer and receive({ max }) as the client's behave (receiver-api.ts, receive-queue.ts), over stand-in deliveries. */
function fakeReceiver() {
  const queue: Delivery[] = [];
  let waiting: ((batch: Delivery[]) => void) | undefined;
  let waitingMax = 0;
  const receiver = {
    get buffered() {
      return queue.length;
    },
    receive: ({ max }: { max: number }) =>
      queue.length > 0
        ? Promise.resolve(queue.splice(0, max))
        : new Promise<Delivery[]>((resolve) => {
            waiting = resolve;
            waitingMax = max;
          }),
  };
  /** One socket read's deliveries arriving: a waiting receive() gets them at once. */
  const read = (...ids: number[]): void => {
    for (const id of ids) queue.push({ id } as unknown as Delivery);
    const w = waiting;
    waiting = undefined;
    w?.(queue.splice(0, waitingMax));
  };
  return { receiver: receiver as unknown as Receiver, read };
}

const ids = (batch: Delivery[] | undefined) => batch?.map((d) => (d as unknown as { id: number }).id);
/** Resolves in the check phase of the next turn (after this turn's immediates). */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)));

describe('receiveBatch', () => {
  it('hands out a burst read in two reads of one turn as one batch', async () => {
    const { receiver, read } = fakeReceiver();
    const batch = receiveBatch(receiver, 100);
    // two reads in one turn, each handled (and its microtasks drained) before the next, as a
    // socket's reads of one poll phase are
    setImmediate(() => read(1, 2, 3));
    setImmediate(() => read(4, 5));
    expect(ids(await batch)).toEqual([1, 2, 3, 4, 5]);
  });

  it('takes no more than max, and what is left stays buffered for the next batch', async () => {
    const { receiver, read } = fakeReceiver();
    const batch = receiveBatch(receiver, 4);
    setImmediate(() => read(1, 2, 3));
    setImmediate(() => read(4, 5));
    expect(ids(await batch)).toEqual([1, 2, 3, 4]);
    expect(ids(await receiveBatch(receiver, 4))).toEqual([5]);
  });

  it('waits one turn at most: a read of a later turn goes to the next batch', async () => {
    const { receiver, read } = fakeReceiver();
    const batch = receiveBatch(receiver, 100);
    setImmediate(() => {
      read(1);
      // two turns later: after the batch's own wait of one
      void nextTurn().then(() => read(2));
    });
    expect(ids(await batch)).toEqual([1]);
    expect(ids(await receiveBatch(receiver, 100))).toEqual([2]);
  });
});
