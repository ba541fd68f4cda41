/**
 * conn.transaction() against the reference broker (single node, real sockets): commit makes the
 * transaction's sends visible all at once, rollback drops them and rethrows, transactional
 * acceptance is undone by a rollback, and a connection lost in the middle (a proxy that resets
 * it) rolls the transaction back or, when only the commit's answer is lost, leaves it in doubt.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrokerHandle, startBroker } from '../../src/broker.js';
import {
  ClientError,
  type Connection,
  connect,
  decodeMessage,
  described,
  LinkError,
  type Receiver,
  SendError,
  TransactionError,
  ulong,
} from '../../src/index.js';
import { takeAvailable } from '../support/available.js';
import { RecordingProxy } from '../support/recording-proxy.js';
import { SettlementDropProxy } from '../support/settlement-drop-proxy.js';
import { startRheaPeer } from './rhea-peer.js';

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

/** A receiver that only takes what it is asked for (credit 0), with its own dedup off. */
function watcher(c: Connection, queue: string): Promise<Receiver> {
  return c.openReceiver(queue, { credit: 0, dedup: false });
}

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
    // credit 2 per publisher link: most sends wait for credit while the commit could go out
    const slow = await startBroker({ host: '127.0.0.1', port: 0, publisherCredit: 2 });
    const c = await connect({ urls: slow.url });
    try {
      const sender = await c.openSender('tx-unawaited');
      const pending: Promise<unknown>[] = [];
      await c.transaction((tx) => {
        for (let i = 0; i < 20; i++) pending.push(sender.send({ body: i }, { tx }));
      });
      // every send was answered within the transaction before the commit went out
      expect(await Promise.all(pending)).toHaveLength(20);
      const seen = await watcher(c, 'tx-unawaited');
      expect(await takeAvailable(seen)).toEqual([...Array(20).keys()]);
    } finally {
      await c.close();
      await slow.stop();
    }
  });

  it('sends still in flight when the commit is abandoned (signal) end, and the transaction rolls back', async () => {
    const slow = await startBroker({ host: '127.0.0.1', port: 0, publisherCredit: 2 });
    const c = await connect({ urls: slow.url });
    try {
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
    } finally {
      await c.close();
      await slow.stop();
    }
  });
});

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

describe('conn.transaction(): the connection is lost', () => {
  let proxy: SettlementDropProxy;
  let lossy: Connection;

  beforeAll(async () => {
    proxy = new SettlementDropProxy({ host: '127.0.0.1', port: broker.port });
    const port = await proxy.listen();
    // in order: through the proxy first; once it dropped, it refuses and the client fails over
    // to the broker's own port
    lossy = await connect({
      urls: [`amqp://127.0.0.1:${port}`, broker.url],
      randomizeMembers: false,
      containerId: 'tx-lossy',
    });
  });
  afterAll(async () => {
    await lossy?.close();
    await proxy?.close();
  });

  it('lost while open: the transaction rejects with a TransactionError and none of it is visible or replayed', async () => {
    const sender = await lossy.openSender('tx-lost-open');
    const seen = await watcher(outside, 'tx-lost-open');
    let secondSend: Promise<unknown> | undefined;
    const failedOver = new Promise((resolve) => lossy.once('failover', resolve));
    const outcome = lossy.transaction(async (tx) => {
      await sender.send({ body: 'first' }, { tx });
      // the broker's answer to the next send is lost with the connection
      void proxy.dropNextSettlement();
      secondSend = sender.send({ body: 'second' }, { tx });
      await secondSend;
    });
    await expect(outcome).rejects.toBeInstanceOf(TransactionError);
    await expect(outcome).rejects.toMatchObject({ condition: 'amqp:transaction:rollback' });
    await expect(secondSend).rejects.toMatchObject({ inDoubt: false });
    await failedOver;
    // the connection works again, and the failover journal re-sent nothing of the transaction
    await sender.send({ body: 'plain' });
    expect(await takeAvailable(seen)).toEqual(['plain']);
    await seen.close();
  });
});

describe('conn.transaction(): the commit answer is lost', () => {
  it('rejects in doubt (ClientError quorate:in-doubt), never as a success', async () => {
    const proxy = new SettlementDropProxy({ host: '127.0.0.1', port: broker.port });
    const port = await proxy.listen();
    const c = await connect({
      urls: [`amqp://127.0.0.1:${port}`, broker.url],
      randomizeMembers: false,
      containerId: 'tx-doubt',
    });
    try {
      const sender = await c.openSender('tx-doubt');
      const outcome = c.transaction(async (tx) => {
        await sender.send({ body: 'maybe' }, { tx });
        // the next settlement the broker sends is its answer to the commit
        void proxy.dropNextSettlement();
      });
      await expect(outcome).rejects.toBeInstanceOf(ClientError);
      await expect(outcome).rejects.toMatchObject({ condition: 'quorate:in-doubt' });
      // here the broker did commit (it answers after its commit point): in doubt was the truth
      const seen = await watcher(outside, 'tx-doubt');
      expect(await takeAvailable(seen)).toEqual(['maybe']);
      await seen.close();
    } finally {
      await c.close();
      await proxy.close();
    }
  });
});

describe('conn.transaction(): a broker without a coordinator', () => {
  it('the refused coordinator attach rejects the transaction (LinkError) before the function runs; the next call tries again', async () => {
    // a rhea peer that refuses every link without an address: the coordinator has none
    const peer = await startRheaPeer({ refuse: (address) => address === undefined });
    const c = await connect({ urls: peer.url, reconnect: false });
    try {
      let ran = false;
      const first = c.transaction(() => {
        ran = true;
      });
      await expect(first).rejects.toBeInstanceOf(LinkError);
      await expect(first).rejects.toMatchObject({ condition: 'amqp:not-found' });
      await expect(c.transaction(() => undefined)).rejects.toBeInstanceOf(LinkError);
      expect(ran).toBe(false);
      expect(peer.attaches.filter((a) => a.address === undefined)).toHaveLength(2);
      expect(peer.received).toHaveLength(0);
    } finally {
      await c.close();
      await peer.stop();
    }
  });
});

describe('conn.transaction(): the frames on the wire', () => {
  it('coordinator attach, declare, transactional transfer and disposition, discharge: as AMQP 1.0 part 4 says', async () => {
    const rec = new RecordingProxy({ host: '127.0.0.1', port: broker.port });
    const port = await rec.listen();
    const c = await connect({ urls: `amqp://127.0.0.1:${port}`, reconnect: false });
    try {
      const feeder = await outside.openSender('tx-frames-in');
      await feeder.send({ body: 'in' });
      const sender = await c.openSender('tx-frames-out');
      const r = await c.openReceiver('tx-frames-in', { credit: 1 });
      let txnId: Uint8Array | undefined;
      await c.transaction(async (tx) => {
        txnId = tx.id;
        await sender.send({ body: 'out' }, { tx });
        await (await r.receive({ timeoutMs: 10_000 })).accept({ tx });
      });
      await c.close();

      const frames = rec.fromClient.map((f) => ({
        channel: f.channel,
        p: f.performative,
        payload: f.payload,
      }));
      const attach = frames.find(
        (f) => f.p.type === 'attach' && f.p.body.target && 'coordinator' in f.p.body.target,
      );
      if (attach?.p.type !== 'attach') throw new Error('no coordinator attach');
      expect(attach.p.body.role).toBe(false); // we send to the coordinator
      expect(attach.p.body.target).toMatchObject({ capabilities: ['amqp:local-transactions'] });
      const { channel } = attach;
      const { handle } = attach.p.body;
      const onCoordinator = frames.filter(
        (f) => f.channel === channel && f.p.type === 'transfer' && f.p.body.handle === handle,
      );
      const bodies = onCoordinator.map((f) => decodeMessage(f.payload!).body);
      expect(bodies).toEqual([described(ulong(0x31), []), described(ulong(0x32), [txnId, false])]);

      const transactional = { type: 'transactional-state', txnId };
      const sends = frames.filter((f) => f.p.type === 'transfer' && f.channel !== channel);
      expect(sends.map((f) => f.p.type === 'transfer' && f.p.body.state)).toEqual([transactional]);
      const settlements = frames.filter((f) => f.p.type === 'disposition' && f.p.body.role === true);
      expect(settlements.map((f) => f.p.type === 'disposition' && f.p.body.state)).toEqual([
        { ...transactional, outcome: { type: 'accepted' } },
      ]);
    } finally {
      await c.close();
      await rec.close();
    }
  });
});
