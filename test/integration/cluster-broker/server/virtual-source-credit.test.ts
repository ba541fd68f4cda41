/**
 * A virtual source's link (the membership feed is one) holds at most MAX_WAITING_FOR_CREDIT
 * messages for a receiver that grants no credit (docs/membership.md#feed-credit): a push beyond
 * detaches it with amqp:resource-limit-exceeded instead of growing without bound; a receiver that
 * grants credit gets every push, in order.
 */
import { afterEach, expect, it } from 'vitest';
import { type BrokerHandle, startBroker } from '../../../../src/broker.js';
import type { VirtualSourceSink } from '../../../../src/cluster-broker/server/index.js';
import { MAX_WAITING_FOR_CREDIT } from '../../../../src/cluster-broker/server/virtual-link.js';
import { encodeMessage } from '../../../../src/codec/index.js';
import {
  closeConnection,
  connect,
  type RheaConnection,
  TestReceiver,
} from '../../../cluster-broker/server/rhea-client.js';

const ADDRESS = '$cluster/membership';
const brokers: BrokerHandle[] = [];
const conns: RheaConnection[] = [];
afterEach(async () => {
  for (const c of conns.splice(0)) await closeConnection(c).catch(() => undefined);
  for (const b of brokers.splice(0)) await b.stop();
});

/** A broker serving a feed whose subscribers the test pushes to. */
async function feedBroker(): Promise<{ port: number; sinks: Set<VirtualSourceSink> }> {
  const sinks = new Set<VirtualSourceSink>();
  const feed = {
    subscribe(sink: VirtualSourceSink) {
      sinks.add(sink);
      return () => sinks.delete(sink);
    },
  };
  const broker = await startBroker({
    host: '127.0.0.1',
    port: 0,
    virtualSources: new Map([[ADDRESS, feed]]),
  });
  brokers.push(broker);
  return { port: broker.port, sinks };
}

/** A rhea receiver (no credit yet) subscribed to the feed. */
async function subscribed(): Promise<{ sinks: Set<VirtualSourceSink>; r: TestReceiver }> {
  const { port, sinks } = await feedBroker();
  const conn = await connect({ port });
  conns.push(conn);
  const r = new TestReceiver(conn, ADDRESS);
  await r.opened;
  await r.until(() => sinks.size === 1, 5_000, 'the subscription');
  return { sinks, r };
}

const push = (sinks: Set<VirtualSourceSink>, n: number, from = 0): void => {
  for (let i = from; i < from + n; i++) for (const s of sinks) s.send(encodeMessage({ body: `v${i}` }));
};

it('a receiver without credit is detached with resource-limit-exceeded past the bound', async () => {
  const { sinks, r } = await subscribed();
  push(sinks, MAX_WAITING_FOR_CREDIT);
  const [sink] = [...sinks];
  expect(sink?.open).toBe(true); // the bound itself is held
  push(sinks, 1, MAX_WAITING_FOR_CREDIT);
  await r.until(() => r.closedByPeer, 10_000, 'the detach');
  expect(r.error?.condition).toBe('amqp:resource-limit-exceeded');
  expect(r.error?.description).toContain('grant it credit');
  expect(sinks.size).toBe(0); // unsubscribed: nothing more is held for it
});

it('a receiver that grants credit gets every push, in order, past the bound', async () => {
  const { sinks, r } = await subscribed();
  const bodies: unknown[] = [];
  for (let round = 0; round < 3; round++) {
    push(sinks, MAX_WAITING_FOR_CREDIT, round * MAX_WAITING_FOR_CREDIT);
    for (const m of await r.next(MAX_WAITING_FOR_CREDIT)) bodies.push(m.message.body);
  }
  expect(bodies).toEqual(Array.from({ length: 3 * MAX_WAITING_FOR_CREDIT }, (_, i) => `v${i}`));
  expect(r.closedByPeer).toBe(false);
});
