/**
 * Client failover against rhea peers, while no member is up: the offline buffer's bound (wait vs
 * reject), deadlines (inDoubt set right), close() while reconnecting, and reconnect limits running out.
 */
import { describe, expect, it } from 'vitest';
import { freePort, waitFor } from '../../support/net.js';
import { client, once, peer, useFailoverCleanup } from './failover-peers.js';

useFailoverCleanup();

describe('client failover (rhea peers)', () => {
  it('buffer bound while disconnected: send waits for room (onFull wait)', async () => {
    const a = await peer();
    const bPort = await freePort();
    const conn = await client([a.url, `amqp://127.0.0.1:${bPort}`], { bufferLimit: { messages: 2 } });
    const sender = await conn.openSender('bq');
    const disconnected = once(conn, 'disconnected');
    await a.stop();
    await disconnected;
    const p1 = sender.send({ body: 1 });
    const p2 = sender.send({ body: 2 });
    let third = false;
    const p3 = sender.send({ body: 3 }).then((r) => {
      third = true;
      return r;
    });
    // the third send must not end while the buffer is full: give it time to (wrongly) do so
    await new Promise((r) => setTimeout(r, 200));
    expect(third).toBe(false);
    expect(conn.stats().buffered.messages).toBe(2);
    expect(conn.stats().waiting).toBe(1);
    const b = await peer({ port: bPort });
    const rs = await Promise.all([p1, p2, p3]);
    expect(rs.map((r) => r.state)).toEqual(['accepted', 'accepted', 'accepted']);
    expect(b.received.map((r) => r.m.message.body)).toEqual([1, 2, 3]);
  });

  it("buffer bound while disconnected: onFull 'reject' fails at once, not in doubt", async () => {
    const a = await peer();
    const bPort = await freePort();
    const conn = await client([a.url, `amqp://127.0.0.1:${bPort}`], {
      bufferLimit: { messages: 2 },
      onFull: 'reject',
    });
    const sender = await conn.openSender('bq');
    const disconnected = once(conn, 'disconnected');
    await a.stop();
    await disconnected;
    const p1 = sender.send({ body: 1 });
    const p2 = sender.send({ body: 2 });
    const err = await sender.send({ messageId: 'third', body: 3 }).catch((e: unknown) => e);
    expect(err).toMatchObject({ condition: 'quorate:buffer-full', messageId: 'third', inDoubt: false });
    const b = await peer({ port: bPort });
    await Promise.all([p1, p2]);
    expect(b.received).toHaveLength(2);
  });

  it('deadlines while disconnected: a never-written send is not in doubt, a written one is; both leave the journal', async () => {
    const a = await peer({ outcome: () => 'hold' });
    const bPort = await freePort();
    const conn = await client([a.url, `amqp://127.0.0.1:${bPort}`]);
    const sender = await conn.openSender('dl');
    const written = sender.send({ messageId: 'written', body: 1 }, { timeoutMs: 1500 });
    await waitFor(() => a.received.length === 1, {
      timeoutMs: 15_000,
      what: 'a.received.length === 1',
      intervalMs: 10,
    });
    const disconnected = once(conn, 'disconnected');
    await a.stop();
    await disconnected;
    const never = sender.send({ messageId: 'never', body: 2 }, { timeoutMs: 200 });
    await expect(never).rejects.toMatchObject({
      condition: 'quorate:timeout',
      messageId: 'never',
      inDoubt: false,
    });
    await expect(written).rejects.toMatchObject({
      condition: 'quorate:timeout',
      messageId: 'written',
      inDoubt: true,
    });
    expect(conn.stats().buffered.messages).toBe(0);
    // once a member is back, abandoned sends are not re-sent
    const b = await peer({ port: bPort });
    await once(conn, 'failover');
    await sender.send({ messageId: 'fresh', body: 3 });
    expect(b.received.map((r) => r.m.message.messageId)).toEqual(['fresh']);
  });

  it('close() while reconnecting stops at once; pending sends reject as closed', async () => {
    const a = await peer({ outcome: () => 'hold' });
    const conn = await client([a.url]);
    const sender = await conn.openSender('c');
    const pending = sender.send({ messageId: 'c1', body: 1 });
    await waitFor(() => a.received.length === 1, {
      timeoutMs: 15_000,
      what: 'a.received.length === 1',
      intervalMs: 10,
    });
    const disconnected = once(conn, 'disconnected');
    await a.stop();
    await disconnected;
    expect(conn.state).toBe('reconnecting');
    const started = Date.now();
    await conn.close();
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(conn.state).toBe('closed');
    await expect(pending).rejects.toMatchObject({
      condition: 'quorate:closed',
      messageId: 'c1',
      inDoubt: true,
    });
  });

  it('when reconnect limits run out, every pending operation rejects with a clear error', async () => {
    const a = await peer({ outcome: () => 'hold' });
    const conn = await client([a.url], { reconnect: { initialDelayMs: 20, maxDelayMs: 50, maxTimeMs: 600 } });
    const sender = await conn.openSender('gone');
    const receiver = await conn.openReceiver('gone');
    const pending = sender.send({ messageId: 'lost?', body: 1 });
    await waitFor(() => a.received.length === 1, {
      timeoutMs: 15_000,
      what: 'a.received.length === 1',
      intervalMs: 10,
    });
    const closed = once(conn, 'closed');
    const next = receiver.receive();
    await a.stop();
    const info = await closed;
    expect(info.error).toMatchObject({ condition: 'quorate:reconnect-exhausted' });
    await expect(pending).rejects.toMatchObject({
      condition: 'quorate:reconnect-exhausted',
      messageId: 'lost?',
      inDoubt: true,
    });
    await expect(next).rejects.toMatchObject({ condition: 'quorate:reconnect-exhausted' });
    await expect(sender.send({ body: 2 })).rejects.toMatchObject({ inDoubt: false });
    expect(conn.state).toBe('closed');
  });
});
