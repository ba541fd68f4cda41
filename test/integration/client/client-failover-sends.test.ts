/**
 * Client failover against rhea peers: unsettled sends re-sent in order with the same message-id on
 * the next member (links re-attached under the same names and container-id), queued sends after them.
 */
import { describe, expect, it } from 'vitest';
import type { Connection, ConnectionEvents, SendResult } from '../../../src/index.js';
import { freePort, waitFor } from '../../support/net.js';
import { client, once, peer, useFailoverCleanup } from './failover-peers.js';

useFailoverCleanup();

/** Records every connection event, in order. */
function record(conn: Connection) {
  const events: { name: keyof ConnectionEvents; info: unknown }[] = [];
  const names: (keyof ConnectionEvents)[] = [
    'connected',
    'disconnected',
    'reconnecting',
    'failover',
    'membership',
    'inDoubt',
    'closed',
  ];
  for (const name of names) conn.on(name, (info: unknown) => events.push({ name, info }));
  return {
    events,
    of: <K extends keyof ConnectionEvents>(name: K) =>
      events.filter((e) => e.name === name).map((e) => e.info as ConnectionEvents[K][0]),
  };
}

describe('client failover (rhea peers)', () => {
  it('re-sends unsettled deliveries in order with the same message-ids on the next member', async () => {
    const a = await peer({ outcome: () => 'hold' });
    const b = await peer();
    const conn = await client([a.url, b.url], { containerId: 'fo-1' });
    const rec = record(conn);
    const sender = await conn.openSender('orders');
    const pending: Promise<SendResult>[] = [];
    for (let i = 0; i < 5; i++) pending.push(sender.send({ body: i }));
    await waitFor(() => a.received.length === 5, {
      timeoutMs: 15_000,
      what: 'A to hold 5 messages',
      intervalMs: 10,
    });
    const idsOnA = a.received.map((r) => r.m.message.messageId);
    const failover = once(conn, 'failover');
    await a.stop();
    const f = await failover;
    const results = await Promise.all(pending);
    expect(results.every((r) => r.state === 'accepted' && r.resent)).toBe(true);
    expect(results.map((r) => r.messageId)).toEqual(idsOnA);
    // same order, same ids, same bytes
    expect(b.received.map((r) => r.m.message.messageId)).toEqual(idsOnA);
    expect(b.received.map((r) => r.m.bytes)).toEqual(a.received.map((r) => r.m.bytes));
    expect(f).toMatchObject({ from: a.url, to: b.url, resent: 5, reattached: 1 });
    expect(f.durationMs).toBeGreaterThanOrEqual(0);
    expect(rec.of('inDoubt').map((e) => e.messageId)).toEqual(idsOnA);
    expect(rec.of('inDoubt')[0]!.address).toBe('orders');
    expect(rec.of('disconnected')).toHaveLength(1);
    expect(rec.of('reconnecting')[0]).toMatchObject({ attempt: 1 });
    // the sender re-attached under the same name and container-id
    const attachA = a.attaches.find((x) => x.role === 'sender')!;
    const attachB = b.attaches.find((x) => x.role === 'sender')!;
    expect(attachB.name).toBe(attachA.name);
    expect(attachB.containerId).toBe('fo-1');
    expect(conn.stats().buffered.messages).toBe(0);
    // later sends go to B
    expect((await sender.send({ body: 'after' })).resent).toBe(false);
  });

  it('queued sends (never written) are written once after failover, after the in-doubt ones', async () => {
    const a = await peer({ outcome: () => 'hold' });
    const bPort = await freePort();
    const conn = await client([a.url, `amqp://127.0.0.1:${bPort}`]);
    const sender = await conn.openSender('q');
    const first = sender.send({ messageId: 'w1', body: 1 });
    await waitFor(() => a.received.length === 1, {
      timeoutMs: 15_000,
      what: 'a.received.length === 1',
      intervalMs: 10,
    });
    const disconnected = once(conn, 'disconnected');
    await a.stop();
    await disconnected;
    // while no member is up, these are buffered, never written
    const later = [sender.send({ messageId: 'q1', body: 2 }), sender.send({ messageId: 'q2', body: 3 })];
    await waitFor(() => conn.stats().buffered.messages === 3, {
      timeoutMs: 15_000,
      what: 'the in-doubt send and the two new ones in the buffer',
      describe: () => JSON.stringify(conn.stats().buffered),
      intervalMs: 10,
    });
    const b = await peer({ port: bPort });
    const results = await Promise.all([first, ...later]);
    expect(results.map((r) => r.resent)).toEqual([true, false, false]);
    expect(b.received.map((r) => r.m.message.messageId)).toEqual(['w1', 'q1', 'q2']);
  });
});
