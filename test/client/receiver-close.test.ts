/**
 * Closing a receiver while settlements wait for the broker's confirmation (rcv-settle-mode
 * second): every accept() promise settles (confirmed, or rejected as in doubt), none waits for
 * ever: a consumer loop that awaits its accepts after close() must end.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type BrokerHandle, startBroker } from '../../src/broker.js';
import { keptTwin } from '../../src/client/shape-keeper.js';
import { ClientError } from '../../src/errors.js';
import { type Connection, connect } from '../../src/index.js';
import { collectedWithin } from '../support/collected.js';

let dir: string;
let broker: BrokerHandle;
let conn: Connection;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'quorate-receiver-close-'));
  // a durable store: the broker confirms an accept only after its removal is fsynced
  broker = await startBroker({ port: 0, dataDir: dir });
  conn = await connect({ urls: broker.url });
});
afterAll(async () => {
  await conn?.close();
  await broker?.stop();
  await rm(dir, { recursive: true, force: true });
});

it('accepts still waiting for confirmation settle when the receiver is closed', async () => {
  const sender = await conn.openSender('close-q');
  await Promise.all(sender.sendBatch(Array.from({ length: 300 }, (_, i) => ({ body: i }))));
  const receiver = await conn.openReceiver('close-q', { credit: 300 });
  const accepts: Promise<'confirmed' | 'in-doubt'>[] = [];
  for (let i = 0; i < 300; i++) {
    const d = await receiver.receive({ timeoutMs: 10_000 });
    accepts.push(
      d.accept().then(
        () => 'confirmed' as const,
        (err: unknown) => {
          expect(err).toBeInstanceOf(ClientError);
          expect((err as ClientError).condition).toBe('quorate:in-doubt');
          return 'in-doubt' as const;
        },
      ),
    );
  }
  await receiver.close();
  let timer: NodeJS.Timeout | undefined;
  const outcomes = await Promise.race([
    Promise.all(accepts),
    new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error('accept() promises still pending 20 s after close()')),
        20_000,
      );
    }),
  ]).finally(() => clearTimeout(timer));
  expect(outcomes).toHaveLength(300);
});

it('a closed receiver is not kept alive by the deadline of its last receive()', async () => {
  const sender = await conn.openSender('close-gc-q');
  await sender.send({ body: 'one', messageId: 'close-gc-1' });
  let receiver: Awaited<ReturnType<Connection['openReceiver']>> | undefined = await conn.openReceiver(
    'close-gc-q',
    { credit: 10 },
  );
  const ref = new WeakRef(receiver);
  // answered at once; its deadline (and a timer armed for it) is ten minutes off
  const batch = await receiver.receive({ max: 10, timeoutMs: 600_000 });
  expect(batch).toHaveLength(1);
  await batch[0]!.accept();
  batch.length = 0;
  await receiver.close();
  receiver = undefined;
  // its session still refers to it until the broker's end arrives, just after close() resolves:
  // collect until it is gone, well before the deadline's timer would have let go of it
  expect(await collectedWithin([ref])).toBe(true);
});

it("a receiver's first arrival leaves a twin (same keys) holding none of its objects, and is collected while the receiver is open", async () => {
  const sender = await conn.openSender('close-twin-q');
  await sender.send({ body: Buffer.alloc(64, 1), messageId: 'close-twin-1', subject: 's' });
  const receiver = await conn.openReceiver('close-twin-q', { credit: 10 });
  // in a function of its own: no variable of this test's frame keeps the delivery
  const receiveOne = async () => {
    const delivery = await receiver.receive({ timeoutMs: 10_000 });
    await delivery.accept();
    return {
      keys: Object.keys(delivery.message),
      refs: [new WeakRef(delivery), new WeakRef(delivery.message as object)],
    };
  };
  const { keys, refs } = await receiveOne();
  const twin = keptTwin();
  expect(Object.keys(twin?.message ?? {})).toEqual(keys);
  expect(twin?.message.messageId).toBe('');
  // the receiver is still open and keeps nothing of the arrival: the application dropped it
  expect(await collectedWithin(refs)).toBe(true);
  await receiver.close();
  await sender.close();
});
