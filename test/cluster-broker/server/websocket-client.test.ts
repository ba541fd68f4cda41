/** The client over ws:// against the broker's WebSocket port (docs/websocket.md#client). */
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { type BrokerHandle, startBroker } from '../../../src/broker.js';
import { connect } from '../../../src/index.js';
import { MAX_WEBSOCKET_MESSAGE_BYTES } from '../../../src/protocol/index.js';

const started: BrokerHandle[] = [];
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
  for (const b of started.splice(0)) await b.stop();
});

/** What the relay saw the client send: the size of each WebSocket message. */
interface RelayCount {
  url: string;
  clientMessages: number[];
}

/**
 * A WebSocket relay in front of `target`: each accepted WebSocket (subprotocol amqp) gets its own
 * WebSocket to the broker, messages are passed on as they are, and the client's are counted.
 */
async function countingRelay(target: string): Promise<RelayCount> {
  const count: RelayCount = { url: '', clientMessages: [] };
  const server = new WebSocketServer({
    host: '127.0.0.1',
    port: 0,
    perMessageDeflate: false,
    handleProtocols: (p) => (p.has('amqp') ? 'amqp' : false),
  });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  server.on('connection', (client) => {
    const upstream = new WebSocket(target, ['amqp'], { perMessageDeflate: false });
    const early: Buffer[] = [];
    client.on('message', (data: Buffer) => {
      count.clientMessages.push(data.length);
      if (upstream.readyState === WebSocket.OPEN) upstream.send(data);
      else early.push(data);
    });
    upstream.on('open', () => {
      for (const d of early.splice(0)) upstream.send(d);
    });
    upstream.on('message', (data: Buffer) => client.send(data));
    upstream.on('close', () => client.close());
    upstream.on('error', () => client.terminate());
    client.on('close', () => upstream.close());
  });
  count.url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
  cleanups.push(async () => {
    for (const c of server.clients) c.terminate();
    await new Promise<void>((r) => server.close(() => r()));
  });
  return count;
}

describe('client over WebSocket', () => {
  it('sends and receives through a ws:// URL, alone and first in a list mixed with amqp://', async () => {
    const b = await startBroker({ host: '127.0.0.1', port: 0, webSocket: { port: 0 } });
    started.push(b);
    const wsBefore = b.server.stats().connectionsAccepted;
    for (const urls of [[b.wsUrl!], [b.wsUrl!, b.url], [b.url, b.wsUrl!]]) {
      // in the given order (not shuffled), so the URL dialled is the first; generous deadlines: on
      // a busy machine a slow attempt must not make the client skip to the next URL
      const conn = await connect({
        urls,
        reconnect: false,
        randomizeMembers: false,
        timeoutMs: 30_000,
        unresponsiveTimeoutMs: false,
      });
      try {
        expect(conn.url).toBe(urls[0]);
        const s = await conn.openSender('q');
        const r = await conn.openReceiver('q');
        const body = 'z'.repeat(5000);
        expect((await s.send({ body })).state).toBe('accepted');
        const d = await r.receive({ timeoutMs: 10_000 });
        expect(d.message.body).toBe(body);
        await d.accept();
      } finally {
        await conn.close();
      }
    }
    expect(b.server.stats().connectionsAccepted - wsBefore).toBe(3);
  });

  it('after Open sends a 1 MiB message in few WebSocket messages, and it reassembles', async () => {
    const b = await startBroker({ host: '127.0.0.1', port: 0, webSocket: { port: 0 } });
    started.push(b);
    const relay = await countingRelay(b.wsUrl!);
    const conn = await connect({
      urls: [relay.url],
      reconnect: false,
      timeoutMs: 30_000,
      unresponsiveTimeoutMs: false,
    });
    try {
      const s = await conn.openSender('big');
      const r = await conn.openReceiver('big');
      const body = new Uint8Array(1024 * 1024).map((_, i) => (i * 31 + 7) & 0xff);
      const before = relay.clientMessages.length;
      expect((await s.send({ body }, { timeoutMs: 60_000 })).state).toBe('accepted');
      const sent = relay.clientMessages.slice(before);
      // 1 MiB in messages of up to 64 KiB: 16 and a few (the transfer frames' headers, the
      // disposition); at 512 bytes it would take over 2000
      expect(sent.length).toBeLessThan(40);
      expect(Math.max(...sent)).toBeLessThanOrEqual(MAX_WEBSOCKET_MESSAGE_BYTES);
      const d = await r.receive({ timeoutMs: 30_000 });
      expect(Buffer.from(d.message.body as Uint8Array).equals(Buffer.from(body))).toBe(true);
      await d.accept();
    } finally {
      await conn.close();
    }
  });
});
