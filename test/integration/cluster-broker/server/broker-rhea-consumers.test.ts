/**
 * rhea 3.0.5 against our broker, the single node and a cluster follower (rhea-broker.ts), consumers
 * and links: competing consumers, many links, detached or dropped consumers giving messages back,
 * link stealing, drain.
 */
import { expect } from 'vitest';
import {
  closeConnection,
  connect,
  sendAll,
  TestReceiver,
} from '../../../cluster-broker/server/rhea-client.js';
import { waitFor } from '../../../support/net.js';
import { fresh, onEachTarget, waitCounts } from './rhea-broker.js';

onEachTarget('rhea client against the broker', (t, it) => {
  it('competing consumers share a queue in FIFO order without overlap', async () => {
    const q = fresh('compete');
    const n = 200;
    await sendAll(
      t.conn,
      q,
      Array.from({ length: n }, (_, i) => ({ body: i, message_id: `c-${i}` })),
    );
    const r1 = new TestReceiver(t.conn, q);
    const r2 = new TestReceiver(t.conn, q);
    const seen: number[] = [];
    const take = async (r: TestReceiver) => {
      for (;;) {
        const batch = await r.next(10).catch(() => []);
        if (batch.length === 0) return;
        for (const g of batch) {
          seen.push(g.message.body as number);
          g.delivery.accept();
        }
        if (seen.length >= n) return;
      }
    };
    await Promise.race([
      Promise.all([take(r1), take(r2)]),
      waitFor(() => seen.length >= n, { timeoutMs: 20_000, what: 'seen.length >= n', intervalMs: 20 }),
    ]);
    expect(seen.length).toBe(n);
    expect(new Set(seen).size).toBe(n);
    r1.link.close();
    r2.link.close();
  });

  it('serves many links at once', async () => {
    const links = 40;
    const per = 25;
    const qs = Array.from({ length: links }, (_, i) => fresh(`many-${i}`));
    const sent = await Promise.all(
      qs.map((q) =>
        sendAll(
          t.conn,
          q,
          Array.from({ length: per }, (_, i) => ({ body: `${q}:${i}` })),
        ),
      ),
    );
    for (const s of sent) expect(s.every((o) => o.state === 'accepted')).toBe(true);
    const receivers = qs.map((q) => new TestReceiver(t.conn, q));
    const got = await Promise.all(receivers.map((r) => r.next(per)));
    got.forEach((batch, k) => {
      expect(batch.map((g) => g.message.body)).toEqual(
        Array.from({ length: per }, (_, i) => `${qs[k]}:${i}`),
      );
      for (const g of batch) g.delivery.accept();
    });
    for (const r of receivers) r.link.close();
  });

  it('a detached consumer gives its unsettled messages back, each a delivery more (delivery-count 1)', async () => {
    const q = fresh('detach');
    await sendAll(t.conn, q, [{ body: 'h1' }, { body: 'h2' }]);
    const r1 = new TestReceiver(t.conn, q);
    const got = await r1.next(2);
    got[0]!.delivery.accept();
    r1.link.close();
    const r2 = new TestReceiver(t.conn, q);
    const [b] = await r2.next(1);
    expect(b!.message.body).toBe('h2');
    expect(b!.message.delivery_count ?? 0).toBe(1);
    b!.delivery.accept();
    r2.link.close();
  });

  it('consumers whose sockets drop mid-stream give every held message back', async () => {
    const q = fresh('drop');
    const n = 300;
    await sendAll(
      t.conn,
      q,
      Array.from({ length: n }, (_, i) => ({ body: i })),
    );
    const victims = await Promise.all(Array.from({ length: 5 }, () => connect({ port: t.port })));
    const receivers = victims.map((c) => new TestReceiver(c, q));
    await Promise.all(receivers.map((r) => r.next(40)));
    await waitCounts(t, q, { depth: n, acquired: 200 });
    for (const c of victims) (c as unknown as { socket: { destroy(): void } }).socket.destroy();
    await waitCounts(t, q, { depth: n, acquired: 0 });
    const r = new TestReceiver(t.conn, q);
    const got = await r.next(n);
    expect(new Set(got.map((g) => g.message.body)).size).toBe(n);
    for (const g of got) g.delivery.accept();
    r.link.close();
  });

  it('a receiver re-attached under the same container-id and name steals the link', async () => {
    const q = fresh('steal');
    await sendAll(t.conn, q, [{ body: 'st1' }]);
    const c1 = await connect({ port: t.port, containerId: 'steal-container' });
    const c2 = await connect({ port: t.port, containerId: 'steal-container' });
    const r1 = new TestReceiver(c1, q, { name: 'the-link' });
    const [a] = await r1.next(1);
    expect(a!.message.body).toBe('st1');
    const r2 = new TestReceiver(c2, q, { name: 'the-link' });
    await r1.until(() => r1.closedByPeer, 15_000, 'stolen detach');
    expect(r1.error?.condition).toBe('amqp:link:stolen');
    // what the predecessor held is offered to the successor
    const [b] = await r2.next(1);
    expect(b!.message.body).toBe('st1');
    b!.delivery.accept();
    await closeConnection(c1);
    await closeConnection(c2);
  });

  it('drain: sends what is available, then answers by advancing delivery-count', async () => {
    const q = fresh('drain');
    await sendAll(t.conn, q, [{ body: 'd1' }, { body: 'd2' }, { body: 'd3' }]);
    const r = new TestReceiver(t.conn, q);
    await r.opened;
    let drained = 0;
    r.link.on('receiver_drained', () => drained++);
    r.link.add_credit(10);
    r.link.drain_credit();
    await r.until(() => drained === 1, 15_000, 'drained');
    const got = await r.next(3);
    expect(got.map((g) => g.message.body)).toEqual(['d1', 'd2', 'd3']);
    expect((r.link as unknown as { credit: number }).credit).toBe(0);
    for (const g of got) g.delivery.accept();
    // empty queue: drained at once
    r.link.add_credit(5);
    r.link.drain_credit();
    await r.until(() => drained === 2, 15_000, 'drained again');
    expect((r.link as unknown as { credit: number }).credit).toBe(0);
    r.link.close();
  });
});
