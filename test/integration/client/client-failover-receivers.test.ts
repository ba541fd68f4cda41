/**
 * Client failover against rhea peers, receivers: re-attached under the same name with prefetch or
 * manual credit restored, and redelivered message-ids deduplicated (single and batch receives).
 */
import { describe, expect, it } from 'vitest';
import { encodeMessage } from '../../../src/codec/public.js';
import type { Delivery } from '../../../src/index.js';
import { stored } from '../../client/rhea-peer.js';
import { waitFor } from '../../support/net.js';
import { client, once, peer, useFailoverCleanup } from './failover-peers.js';

useFailoverCleanup();

describe('client failover (rhea peers)', () => {
  it('receivers re-attach with the same name; prefetch credit is restored', async () => {
    const a = await peer();
    const b = await peer();
    const conn = await client([a.url, b.url]);
    const receiver = await conn.openReceiver('work', { credit: 5 });
    await waitFor(() => a.credit(receiver.name) === 5, {
      timeoutMs: 15_000,
      what: 'a.credit(receiver.name) === 5',
      intervalMs: 10,
    });
    const failover = once(conn, 'failover');
    a.killConnections();
    await a.stop();
    expect((await failover).reattached).toBe(1);
    await waitFor(() => b.attaches.some((x) => x.role === 'receiver'), {
      timeoutMs: 15_000,
      what: 'attach on B',
      intervalMs: 10,
    });
    const onB = b.attaches.find((x) => x.role === 'receiver')!;
    expect(onB.name).toBe(receiver.name);
    await waitFor(() => b.credit(receiver.name) === 5, {
      timeoutMs: 15_000,
      what: 'credit 5 on B',
      intervalMs: 10,
    });
    b.enqueue('work', stored({ body: 'hi' }, encodeMessage({ messageId: 'm1', body: 'hi' })));
    const d = await receiver.receive({ timeoutMs: 5000 });
    expect(d.message.body).toBe('hi');
    await d.accept();
  });

  it('manual credit: after failover the receiver re-grants what was granted minus what was handed out', async () => {
    const a = await peer();
    const b = await peer();
    const conn = await client([a.url, b.url]);
    const receiver = await conn.openReceiver('manual', { credit: 0 });
    receiver.addCredit(3);
    a.enqueue('manual', stored({}, encodeMessage({ messageId: 'x1', body: 1 })));
    const d = await receiver.receive({ timeoutMs: 5000 });
    await d.accept();
    await waitFor(() => a.credit(receiver.name) === 2, {
      timeoutMs: 15_000,
      what: 'a.credit(receiver.name) === 2',
      intervalMs: 10,
    });
    const failover = once(conn, 'failover');
    await a.stop();
    await failover;
    await waitFor(() => b.credit(receiver.name) === 2, {
      timeoutMs: 15_000,
      what: 'credit 2 on B',
      intervalMs: 10,
    });
  });

  it('dedup: a redelivered accepted id is settled again, not handed out; an unsettled one binds', async () => {
    const a = await peer();
    const b = await peer();
    const conn = await client([a.url, b.url]);
    const receiver = await conn.openReceiver('dd', { credit: 10 });
    const bytesX = encodeMessage({ messageId: 'x', body: 'x' });
    const bytesY = encodeMessage({ messageId: 'y', body: 'y' });
    a.enqueue('dd', stored({}, bytesX));
    a.enqueue('dd', stored({}, bytesY));
    const dx = await receiver.receive({ timeoutMs: 5000 });
    expect(dx.message.messageId).toBe('x');
    await dx.accept(); // confirmed on A
    const dy = await receiver.receive({ timeoutMs: 5000 });
    expect(dy.message.messageId).toBe('y'); // handed out, not settled yet
    // the broker failed over without the settlement of x (replica lag): both come again on B
    b.enqueue('dd', stored({}, bytesX));
    b.enqueue('dd', stored({}, bytesY));
    b.enqueue('dd', stored({}, encodeMessage({ messageId: 'z', body: 'z' })));
    const failover = once(conn, 'failover');
    await a.stop();
    await failover;
    const dz = await receiver.receive({ timeoutMs: 5000 });
    expect(dz.message.messageId).toBe('z'); // x suppressed, y bound to dy
    expect(receiver.duplicatesSuppressed).toBe(2);
    await dy.accept(); // settles the bound redelivery on B
    await dz.accept();
    await waitFor(() => b.queue('dd').length === 0, {
      timeoutMs: 15_000,
      what: 'B queue empty',
      intervalMs: 10,
    });
    await expect(receiver.receive({ timeoutMs: 300 })).rejects.toMatchObject({
      condition: 'quorate:timeout',
    });
  });

  it('dedup holds for batch receives: across a failover no message-id is handed out twice', async () => {
    const a = await peer();
    const b = await peer();
    const conn = await client([a.url, b.url]);
    const receiver = await conn.openReceiver('ddb', { credit: 10 });
    const bytes = (id: string) => encodeMessage({ messageId: id, body: id });
    for (const id of ['x', 'y', 'w']) a.enqueue('ddb', stored({}, bytes(id)));
    await waitFor(() => receiver.buffered === 3, {
      timeoutMs: 15_000,
      what: 'x, y, w buffered',
      intervalMs: 10,
    });
    const first = await receiver.receive({ max: 10, timeoutMs: 5000 });
    expect(first.map((d) => d.message.messageId)).toEqual(['x', 'y', 'w']);
    const [dx, dy, dw] = first as [Delivery, Delivery, Delivery];
    await Promise.all([dx.accept(), dw.accept()]); // confirmed on A; y handed out, not settled
    // the broker failed over without those settlements (replica lag): all three come again on B
    for (const id of ['x', 'y', 'w', 'z']) b.enqueue('ddb', stored({}, bytes(id)));
    const failover = once(conn, 'failover');
    await a.stop();
    await failover;
    const after: string[] = [];
    const handedOut: Delivery[] = [];
    while (!after.includes('z')) {
      const batch = await receiver.receive({ max: 10, timeoutMs: 5000 });
      handedOut.push(...batch);
      after.push(...batch.map((d) => String(d.message.messageId)));
    }
    expect(after).toEqual(['z']); // x and w settled again, y bound to dy
    expect(receiver.duplicatesSuppressed).toBe(3);
    await dy.accept(); // settles the bound redelivery on B
    await Promise.all(handedOut.map((d) => d.accept()));
    await waitFor(() => b.queue('ddb').length === 0, {
      timeoutMs: 15_000,
      what: 'B queue empty',
      intervalMs: 10,
    });
    await expect(receiver.receive({ max: 10, timeoutMs: 300 })).rejects.toMatchObject({
      condition: 'quorate:timeout',
    });
  });
});
