/**
 * conn.transaction() against the reference broker (single node, real sockets): commit makes the
 * transaction's sends visible all at once, rollback drops them and rethrows, transactional
 * settlements take effect at the commit and are undone by a rollback. Lost connections and the
 * frames on the wire: transactions-wire.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrokerHandle, startBroker } from '../../src/broker.js';
import { type Connection, connect, SendError, TransactionError } from '../../src/index.js';
import { takeAvailable, watcher } from '../support/available.js';
import { withBroker } from '../support/broker.js';

let broker: BrokerHandle;
let conn: Connection;
/** A second connection: what the rest of the world sees of the queues. */
let outside: Connection;

beforeAll(async () => {
  broker = await startBroker({ host: '127.0.0.1', port: 0 });
  conn = await connect({ urls: broker.url, containerId: 'tx-client' });
  outside = await connect({ urls: broker.url, containerId: 'tx-outside' });
});
afterAll(async () => {
  await conn?.close();
  await outside?.close();
  await broker?.stop();
});

describe('conn.transaction(): sends', () => {
  it('commit: nothing is visible outside before the commit, every send after it', async () => {
    const sender = await conn.openSender('tx-commit');
    const seen = await watcher(outside, 'tx-commit');
    let txId: Uint8Array | undefined;
    const value = await conn.transaction(async (tx) => {
      txId = tx.id;
      const results = await Promise.all([1, 2, 3].map((i) => sender.send({ body: i }, { tx })));
      expect(results.map((r) => r.state)).toEqual(['accepted', 'accepted', 'accepted']);
      expect(await takeAvailable(seen)).toEqual([]);
      return 'done';
    });
    expect(value).toBe('done');
    expect(txId?.length).toBeGreaterThan(0);
    expect(await takeAvailable(seen)).toEqual([1, 2, 3]);
    await seen.close();
  });

  it('rollback: the function throws, its error is rethrown and nothing reaches the queue', async () => {
    const sender = await conn.openSender('tx-rollback');
    const boom = new Error('boom');
    await expect(
      conn.transaction(async (tx) => {
        await sender.send({ body: 'a' }, { tx });
        await sender.send({ body: 'b' }, { tx });
        throw boom;
      }),
    ).rejects.toBe(boom);
    await sender.send({ body: 'after' }); // the queue works and holds only this
    const seen = await watcher(outside, 'tx-rollback');
    expect(await takeAvailable(seen)).toEqual(['after']);
    await seen.close();
  });

  it('a send outside the transaction is visible at once, beside an open one', async () => {
    const sender = await conn.openSender('tx-mixed');
    const seen = await watcher(outside, 'tx-mixed');
    await conn.transaction(async (tx) => {
      await sender.send({ body: 'in' }, { tx });
      await sender.send({ body: 'out' });
      expect(await takeAvailable(seen)).toEqual(['out']);
    });
    expect(await takeAvailable(seen)).toEqual(['in']);
    await seen.close();
  });

  it('a transaction ends with its function: a send with it afterwards is refused, not sent', async () => {
    const sender = await conn.openSender('tx-ended');
    let kept: Parameters<Parameters<Connection['transaction']>[0]>[0] | undefined;
    await conn.transaction((tx) => {
      kept = tx;
    });
    const late = sender.send({ body: 'late' }, { tx: kept });
    await expect(late).rejects.toBeInstanceOf(SendError);
    await expect(late).rejects.toMatchObject({ condition: 'quorate:illegal-state', inDoubt: false });
    await expect(sender.send({ body: 'x' }, { tx: { id: new Uint8Array(8) } })).rejects.toBeInstanceOf(
      TypeError,
    );
    const seen = await watcher(outside, 'tx-ended');
    expect(await takeAvailable(seen)).toEqual([]);
    await seen.close();
  });

  it('a send that ends without its outcome (aborted after it was written) turns the commit into a rollback', async () => {
    const sender = await conn.openSender('tx-unanswered');
    let aborted: Promise<unknown> | undefined;
    const outcome = conn.transaction(async (tx) => {
      await sender.send({ body: 'answered' }, { tx });
      const ac = new AbortController();
      aborted = sender.send({ body: 'unanswered' }, { tx, signal: ac.signal });
      // written to the connection already (credit allows it at once): the broker may hold it
      ac.abort();
      await aborted.catch(() => undefined);
      return 'commit?';
    });
    await expect(outcome).rejects.toBeInstanceOf(TransactionError);
    await expect(outcome).rejects.toMatchObject({ condition: 'amqp:transaction:rollback' });
    await expect(aborted).rejects.toMatchObject({ condition: 'quorate:aborted', inDoubt: false });
    const seen = await watcher(outside, 'tx-unanswered');
    expect(await takeAvailable(seen)).toEqual([]);
    await seen.close();
  });

  it('two transactions at once on one connection: one commits, the other rolls back', async () => {
    const sender = await conn.openSender('tx-concurrent');
    let bothOpen!: () => void;
    const opened = new Promise<void>((r) => {
      let n = 0;
      bothOpen = () => {
        if (++n === 2) r();
      };
    });
    const ids: string[] = [];
    const committed = conn.transaction(async (tx) => {
      ids.push(Buffer.from(tx.id).toString('hex'));
      await sender.send({ body: 'kept' }, { tx });
      bothOpen();
      await opened;
    });
    const rolledBack = conn.transaction(async (tx) => {
      ids.push(Buffer.from(tx.id).toString('hex'));
      await sender.send({ body: 'dropped' }, { tx });
      bothOpen();
      await opened;
      throw new Error('no');
    });
    await committed;
    await expect(rolledBack).rejects.toThrow('no');
    expect(new Set(ids).size).toBe(2);
    const seen = await watcher(outside, 'tx-concurrent');
    expect(await takeAvailable(seen)).toEqual(['kept']);
    await seen.close();
  });

  it('transaction() without a function rejects with a TypeError', async () => {
    await expect(conn.transaction('not a function' as never)).rejects.toMatchObject({
      name: 'TypeError',
      code: 'ERR_INVALID_ARG_TYPE',
    });
  });

  it('a commit waits for the sends the function did not await (here: held back by a small credit)', async () => {
    await withSlowPublishing(async (c) => {
      const sender = await c.openSender('tx-unawaited');
      const pending: Promise<unknown>[] = [];
      await c.transaction((tx) => {
        for (let i = 0; i < 20; i++) pending.push(sender.send({ body: i }, { tx }));
      });
      // every send was answered within the transaction before the commit went out
      expect(await Promise.all(pending)).toHaveLength(20);
      const seen = await watcher(c, 'tx-unawaited');
      expect(await takeAvailable(seen)).toEqual([...Array(20).keys()]);
    });
  });

  it('sends still in flight when the commit is abandoned (signal) end, and the transaction rolls back', async () => {
    await withSlowPublishing(async (c) => {
      const sender = await c.openSender('tx-abandoned');
      const pending: Promise<unknown>[] = [];
      const ac = new AbortController();
      const outcome = c.transaction(
        (tx) => {
          for (let i = 0; i < 20; i++) {
            const p = sender.send({ body: i }, { tx });
            p.catch(() => undefined); // looked at below, after the transaction
            pending.push(p);
          }
          ac.abort(); // most sends still wait for credit
        },
        { signal: ac.signal },
      );
      await expect(outcome).rejects.toBeInstanceOf(TransactionError);
      await expect(outcome).rejects.toMatchObject({ condition: 'amqp:transaction:rollback' });
      const ended = await Promise.allSettled(pending);
      expect(ended.filter((r) => r.status === 'rejected').length).toBeGreaterThan(0);
      const seen = await watcher(c, 'tx-abandoned');
      expect(await takeAvailable(seen)).toEqual([]);
    });
  });
});

/**
 * Runs `fn` on a connection to a broker granting 2 credits per publisher link: most sends of a
 * batch wait for credit, so a commit could go out before them.
 */
async function withSlowPublishing(fn: (c: Connection) => Promise<void>): Promise<void> {
  await withBroker({ host: '127.0.0.1', publisherCredit: 2 }, async (slow) => {
    const c = await connect({ urls: slow.url });
    try {
      await fn(c);
    } finally {
      await c.close();
    }
  });
}

describe('conn.transaction(): settlements', () => {
  for (const confirmAccept of [true, false]) {
    const mode = confirmAccept ? 'second' : 'first';
    it(`accept({ tx }) (rcv-settle-mode ${mode}): gone after commit`, async () => {
      const queue = `tx-accept-commit-${mode}`;
      const sender = await conn.openSender(queue);
      await Promise.all(sender.sendBatch(['a', 'b'].map((body) => ({ body }))));
      const r = await conn.openReceiver(queue, { credit: 10, confirmAccept });
      expect(r.settleMode).toBe(mode);
      await conn.transaction(async (tx) => {
        for (let i = 0; i < 2; i++) await (await r.receive({ timeoutMs: 10_000 })).accept({ tx });
      });
      await r.close();
      const seen = await watcher(outside, queue);
      expect(await takeAvailable(seen)).toEqual([]);
      await seen.close();
    });

    it(`accept({ tx }) (rcv-settle-mode ${mode}): redelivered after rollback, then accepted for good`, async () => {
      const queue = `tx-accept-rollback-${mode}`;
      const sender = await conn.openSender(queue);
      await Promise.all(sender.sendBatch(['a', 'b'].map((body) => ({ messageId: body, body }))));
      const r = await conn.openReceiver(queue, { credit: 10, confirmAccept });
      const boom = new Error('undo');
      await expect(
        conn.transaction(async (tx) => {
          for (let i = 0; i < 2; i++) await (await r.receive({ timeoutMs: 10_000 })).accept({ tx });
          throw boom;
        }),
      ).rejects.toBe(boom);
      // the broker offers them again and the receiver's dedup hands them out again
      const again = [await r.receive({ timeoutMs: 10_000 }), await r.receive({ timeoutMs: 10_000 })];
      expect(again.map((d) => d.message.body).sort()).toEqual(['a', 'b']);
      for (const d of again) await d.accept();
      await r.close();
      const seen = await watcher(outside, queue);
      expect(await takeAvailable(seen)).toEqual([]);
      await seen.close();
    });
  }

  it('consume and produce in one transaction: the message moves from one queue to the other at commit', async () => {
    const sender = await conn.openSender('tx-move-from');
    await sender.send({ body: 'moving' });
    const to = await conn.openSender('tx-move-to');
    const r = await conn.openReceiver('tx-move-from', { credit: 1 });
    const seenTo = await watcher(outside, 'tx-move-to');
    await conn.transaction(async (tx) => {
      const d = await r.receive({ timeoutMs: 10_000 });
      await to.send({ body: d.message.body }, { tx });
      await d.accept({ tx });
      expect(await takeAvailable(seenTo)).toEqual([]);
    });
    await r.close();
    expect(await takeAvailable(seenTo)).toEqual(['moving']);
    const seenFrom = await watcher(outside, 'tx-move-from');
    expect(await takeAvailable(seenFrom)).toEqual([]);
    await seenTo.close();
    await seenFrom.close();
  });

  it('release({ tx }) and modify({ tx }) are outcomes of the transaction too', async () => {
    const sender = await conn.openSender('tx-release');
    await sender.send({ body: 'r' });
    const r = await conn.openReceiver('tx-release', { credit: 1 });
    await conn.transaction(async (tx) => {
      await (await r.receive({ timeoutMs: 10_000 })).release({ tx });
    });
    const d = await r.receive({ timeoutMs: 10_000 });
    expect(d.message.body).toBe('r');
    await conn.transaction(async (tx) => {
      await d.modify({ tx, deliveryFailed: true });
    });
    const d2 = await r.receive({ timeoutMs: 10_000 });
    expect(d2.deliveryCount).toBe(1);
    await d2.accept();
    await r.close();
  });
});
