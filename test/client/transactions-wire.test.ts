/**
 * conn.transaction() and the wire, against the reference broker: a connection lost while a
 * transaction is open (a proxy that resets it) rolls it back and nothing of it is re-sent; a
 * lost answer to the commit leaves it in doubt; a broker without a coordinator refuses it; and
 * the client's frames are those of AMQP 1.0 part 4.
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
  TransactionError,
  ulong,
} from '../../src/index.js';
import { takeAvailable, watcher } from '../support/available.js';
import { RecordingProxy } from '../support/recording-proxy.js';
import { SettlementDropProxy } from '../support/settlement-drop-proxy.js';
import { startRheaPeer } from './rhea-peer.js';

let broker: BrokerHandle;
/** A connection of its own: what the rest of the world sees of the queues. */
let outside: Connection;

beforeAll(async () => {
  broker = await startBroker({ host: '127.0.0.1', port: 0 });
  outside = await connect({ urls: broker.url, containerId: 'tx-wire-outside' });
});
afterAll(async () => {
  await outside?.close();
  await broker?.stop();
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
  /** A client behind a recording proxy, and one message waiting on `queue` for it. */
  async function recordedClientWithOneWaiting(queue: string) {
    const rec = new RecordingProxy({ host: '127.0.0.1', port: broker.port });
    const port = await rec.listen();
    const c = await connect({ urls: `amqp://127.0.0.1:${port}`, reconnect: false });
    await (await outside.openSender(queue)).send({ body: 'in' });
    return { rec, c };
  }

  it('coordinator attach, declare, transactional transfer and disposition, discharge: as AMQP 1.0 part 4 says', async () => {
    const { rec, c } = await recordedClientWithOneWaiting('tx-frames-in');
    try {
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

  it('a transactional accept not awaited still goes out ahead of the commit that follows it', async () => {
    const { rec, c } = await recordedClientWithOneWaiting('tx-order-in');
    try {
      const r = await c.openReceiver('tx-order-in', { credit: 1 });
      const d = await r.receive({ timeoutMs: 10_000 });
      // the discharge is sent in the same run of microtasks, before any batch is written
      await c.transaction(async (tx) => {
        void d.accept({ tx });
      });
      await c.close();
      // no sender here: the client's transfers are the coordinator's declare, then discharge
      const types = rec.fromClient.map((f) => f.performative.type);
      const accept = types.indexOf('disposition');
      const discharge = types.lastIndexOf('transfer');
      expect(accept).toBeGreaterThanOrEqual(0);
      expect(discharge).toBeGreaterThan(accept);
    } finally {
      await c.close();
      await rec.close();
    }
  });
});
