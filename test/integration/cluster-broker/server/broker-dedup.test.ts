/**
 * Duplicate detection that surprises no one: the broker drops a re-used message-id only for
 * senders that desire `quorate:dedup` (the quorate client always does) or on a `dedup` broker.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrokerHandle, startBroker } from '../../../../src/broker.js';
import { connect } from '../../../../src/index.js';
import {
  closeConnection,
  connect as rheaConnect,
  sendAll,
  TestReceiver,
} from '../../../cluster-broker/server/rhea-client.js';

describe('a default broker', () => {
  let broker: BrokerHandle;
  beforeAll(async () => {
    broker = await startBroker();
  });
  afterAll(() => broker?.stop());

  it("absorbs a quorate sender's re-send of a message-id (it desires quorate:dedup)", async () => {
    const conn = await connect({ urls: broker.url, reconnect: false });
    try {
      const sender = await conn.openSender('dedup-quorate');
      const a = await sender.send({ messageId: 'order-1', body: 'first' });
      const b = await sender.send({ messageId: 'order-1', body: 're-sent' });
      expect([a.state, b.state]).toEqual(['accepted', 'accepted']);
      expect(broker.stats().queues.find((q) => q.name === 'dedup-quorate')?.depth).toBe(1);
    } finally {
      await conn.close();
    }
  });

  it('delivers every message of a rhea sender re-using message-ids', async () => {
    const c = await rheaConnect({ port: broker.port });
    try {
      for (let run = 0; run < 2; run++) {
        const outcomes = await sendAll(
          c,
          'dedup-rhea',
          [1, 2, 3].map((i) => ({ message_id: i, body: `run ${run} #${i}` })),
        );
        expect(outcomes.map((o) => o.state)).toEqual(['accepted', 'accepted', 'accepted']);
      }
      const r = new TestReceiver(c, 'dedup-rhea');
      const got = await r.next(6);
      expect(got.map((g) => g.message.body)).toEqual([
        'run 0 #1',
        'run 0 #2',
        'run 0 #3',
        'run 1 #1',
        'run 1 #2',
        'run 1 #3',
      ]);
      for (const g of got) g.delivery.accept();
    } finally {
      await closeConnection(c);
    }
  });
});

describe('a broker started with dedup: true (--dedup)', () => {
  let broker: BrokerHandle;
  beforeAll(async () => {
    broker = await startBroker({ dedup: true });
  });
  afterAll(() => broker?.stop());

  it('drops a re-used message-id of any sender', async () => {
    const c = await rheaConnect({ port: broker.port });
    try {
      await sendAll(c, 'dedup-all', [{ message_id: 7, body: 'a' }]);
      const again = await sendAll(c, 'dedup-all', [{ message_id: 7, body: 'b' }]);
      expect(again[0]?.state).toBe('accepted');
      expect(broker.stats().queues.find((q) => q.name === 'dedup-all')?.depth).toBe(1);
    } finally {
      await closeConnection(c);
    }
  });
});
