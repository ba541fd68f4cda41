/**
 * The WebSocket port's HTTP side under the broker's limits (docs/websocket.md#limits): a socket
 * waiting for its upgrade holds a place under the connection caps counted with TCP connections,
 * one that never sends its upgrade request is closed at the handshake deadline, and an oversized
 * request head is refused.
 */
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type BrokerHandle, startBroker } from '../../../src/broker.js';
import { WS_MAX_HEADER_BYTES } from '../../../src/cluster-broker/server/ws-listener.js';
import { connect } from '../../../src/index.js';

const started: BrokerHandle[] = [];
const sockets: net.Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  for (const b of started.splice(0)) await b.stop();
});

async function broker(opts: Parameters<typeof startBroker>[0] = {}): Promise<BrokerHandle> {
  const b = await startBroker({ host: '127.0.0.1', port: 0, webSocket: { port: 0 }, ...opts });
  started.push(b);
  return b;
}

/** A TCP socket to the WebSocket port that sends nothing (yet); resolves once connected. */
function rawSocket(b: BrokerHandle): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const s = net.createConnection({ host: '127.0.0.1', port: Number(new URL(b.wsUrl!).port) }, () =>
      resolve(s),
    );
    s.on('error', reject);
    // read: a paused socket would never see the broker's FIN
    s.resume();
    sockets.push(s);
  });
}

function closed(s: net.Socket): Promise<void> {
  return new Promise((resolve) => (s.destroyed ? resolve() : s.once('close', () => resolve())));
}

/** Upgrades to `amqp`; resolves with 'open' or the HTTP status of a refusal. */
function upgrade(b: BrokerHandle, headers: Record<string, string> = {}): Promise<'open' | number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(b.wsUrl!, ['amqp'], { headers });
    ws.once('open', () => {
      ws.terminate();
      resolve('open');
    });
    ws.once('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      ws.terminate();
    });
    ws.once('error', reject);
  });
}

/** Waits until the broker counts `n` open (AMQP) connections. */
async function connectionsReach(b: BrokerHandle, n: number): Promise<void> {
  while (b.server.stats().connections !== n) await new Promise((r) => setImmediate(r));
}

describe('WebSocket port limits', () => {
  it('a socket waiting for its upgrade counts under maxConnections, with the TCP connections', async () => {
    const b = await broker({ maxConnections: 2 });
    const tcp = await connect({ urls: [`amqp://127.0.0.1:${b.server.port}`], reconnect: false });
    try {
      const waiting = await rawSocket(b);
      // one TCP connection + one socket not yet upgraded: the cap of 2 is reached
      expect(await upgrade(b)).toBe(503);
      await expect(
        connect({ urls: [`amqp://127.0.0.1:${b.server.port}`], reconnect: false }),
      ).rejects.toThrow(/too many connections/);
      waiting.destroy();
      await closed(waiting);
      // its place is given back: an upgrade is served again
      await connectionsReach(b, 1);
      expect(await upgrade(b)).toBe('open');
    } finally {
      await tcp.close();
    }
  });

  it('maxConnectionsPerAddress counts waiting sockets of the address', async () => {
    const b = await broker({ maxConnectionsPerAddress: 2 });
    await rawSocket(b);
    await rawSocket(b);
    expect(await upgrade(b)).toBe(503);
  });

  it('closes a socket that never sends its upgrade request, one that stops halfway and one that trickles, at the deadline', async () => {
    const deadlineMs = 400;
    const b = await broker({ handshakeTimeoutMs: deadlineMs });
    const served = await connect({ urls: [b.wsUrl!], reconnect: false });
    const t0 = performance.now();
    const silent = await rawSocket(b);
    const halfway = await rawSocket(b);
    halfway.write('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n');
    // a byte well within every idle timeout, but the head never ends
    const trickling = await rawSocket(b);
    trickling.write('GET / HTTP/1.1\r\nX-Slow: ');
    const drip = setInterval(() => trickling.writable && trickling.write('x'), deadlineMs / 8);
    try {
      await Promise.all([closed(silent), closed(halfway), closed(trickling)]);
    } finally {
      clearInterval(drip);
    }
    expect(performance.now() - t0).toBeGreaterThanOrEqual(deadlineMs * 0.9);
    // their places are given back
    expect(await upgrade(b)).toBe('open');
    // an upgraded connection is past the HTTP deadlines
    const sender = await served.openSender('limits-q');
    expect((await sender.send({ body: 'still here' })).state).toBe('accepted');
    await served.close();
  });

  it('refuses an upgrade request whose head is over the limit with 431', async () => {
    const b = await broker();
    expect(await upgrade(b, { 'X-Padding': 'x'.repeat(WS_MAX_HEADER_BYTES) })).toBe(431);
    expect(await upgrade(b, { 'X-Padding': 'x'.repeat(WS_MAX_HEADER_BYTES / 2) })).toBe('open');
  });
});
