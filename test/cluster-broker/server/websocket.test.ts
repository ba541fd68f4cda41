/**
 * The broker's AMQP-over-WebSocket listener (docs/websocket.md): the byte stream is joined across
 * messages cut anywhere, the subprotocol and origin rules, wss, and SASL/permissions unchanged.
 */
import type { Duplex } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type BrokerHandle, startBroker } from '../../../src/broker.js';
import { hashPassword } from '../../../src/cluster-broker/server/password-hash.js';
import { parseUsers } from '../../../src/cluster-broker/server/users.js';
import {
  type AmqpErrorBody,
  encodeAmqpFrame,
  encodeProtocolHeader,
  FrameReader,
} from '../../../src/codec/index.js';
import { connect } from '../../../src/index.js';
import { type WebSocketLike, WebSocketStream } from '../../../src/protocol/websocket-stream.js';
import { useSelfSignedCert } from '../../support/tls.js';

const started: BrokerHandle[] = [];
afterEach(async () => {
  for (const b of started.splice(0)) await b.stop();
});

async function broker(opts: Parameters<typeof startBroker>[0] = {}): Promise<BrokerHandle> {
  const b = await startBroker({
    host: '127.0.0.1',
    port: 0,
    ...opts,
    webSocket: { port: 0, ...opts.webSocket },
  });
  started.push(b);
  return b;
}

/** A WebSocket to `url` as a byte stream whose writes are cut into messages of `cut` bytes. */
function wsStream(url: string, cut: number, wsOpts: WebSocket.ClientOptions = {}): Promise<Duplex> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, ['amqp'], wsOpts);
    ws.once('open', () =>
      resolve(
        new WebSocketStream(ws as unknown as WebSocketLike, { sendCallbacks: true, maxMessageBytes: cut }),
      ),
    );
    ws.once('error', reject);
  });
}

/** The HTTP status a refused upgrade answers with. */
function refusedStatus(
  url: string,
  protocols: string[],
  headers: Record<string, string> = {},
): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, protocols, { headers });
    ws.once('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      ws.terminate();
    });
    ws.once('open', () => {
      ws.close();
      reject(new Error('upgrade accepted'));
    });
    ws.once('error', () => {});
  });
}

async function roundTrip(b: BrokerHandle, cut: number): Promise<void> {
  const conn = await connect({
    urls: [`amqp://127.0.0.1:${b.server.port}`],
    dial: () => wsStream(b.wsUrl!, cut),
    reconnect: false,
  });
  try {
    const s = await conn.openSender('q');
    const r = await conn.openReceiver('q');
    const body = `x${'y'.repeat(300)}${cut}`;
    expect((await s.send({ body })).state).toBe('accepted');
    const d = await r.receive({ timeoutMs: 10_000 });
    expect(d.message.body).toBe(body);
    await d.accept();
  } finally {
    await conn.close();
  }
}

describe('AMQP over WebSocket (broker)', () => {
  it('joins frames cut at every byte and at odd places across messages', async () => {
    const b = await broker();
    expect(b.wsUrl).toMatch(/^ws:\/\/127\.0\.0\.1:\d+$/);
    for (const cut of [1, 3, 7, 13, 509]) await roundTrip(b, cut);
  });

  it('refuses an upgrade without the subprotocol amqp', async () => {
    const b = await broker();
    expect(await refusedStatus(b.wsUrl!, [])).toBe(400);
    expect(await refusedStatus(b.wsUrl!, ['mqtt'])).toBe(400);
  });

  it('refuses browser origins not listed, allows listed ones and clients without Origin', async () => {
    const b = await broker({ webSocket: { port: 0, allowOrigins: ['https://app.example'] } });
    expect(await refusedStatus(b.wsUrl!, ['amqp'], { Origin: 'https://evil.example' })).toBe(403);
    (await wsStream(b.wsUrl!, 64, { headers: { Origin: 'https://app.example' } })).destroy();
    (await wsStream(b.wsUrl!, 64)).destroy();
    const any = await broker({ webSocket: { port: 0, allowOrigins: ['*'] } });
    (await wsStream(any.wsUrl!, 64, { headers: { Origin: 'https://evil.example' } })).destroy();
  });

  const pem = useSelfSignedCert();
  it('serves wss:// with the TLS certificate, with SASL PLAIN and permissions as over TCP', async () => {
    const b = await broker({
      tls: { key: pem.key, cert: pem.cert },
      users: parseUsers(`alice:${await hashPassword('secret')}\n`),
      anonymous: false,
      permissions: { users: { alice: { send: ['allowed'], receive: ['allowed'] } } },
    });
    expect(b.wsUrl).toMatch(/^wss:\/\//);
    const dial = () => wsStream(b.wsUrl!, 100, { ca: pem.cert });
    const conn = await connect({
      urls: [`amqp://alice:secret@127.0.0.1:${b.server.port}`],
      dial,
      reconnect: false,
    });
    try {
      const s = await conn.openSender('allowed');
      expect((await s.send({ body: 'ok' })).state).toBe('accepted');
      await expect(conn.openSender('forbidden')).rejects.toMatchObject({
        condition: 'amqp:unauthorized-access',
      });
    } finally {
      await conn.close();
    }
    await expect(
      connect({ urls: [`amqp://alice:wrong@127.0.0.1:${b.server.port}`], dial, reconnect: false }),
    ).rejects.toMatchObject({ condition: 'amqp:unauthorized-access' });
  });

  it('a stopping broker closes a WebSocket connection with amqp:connection:forced, as over TCP', async () => {
    const b = await startBroker({ host: '127.0.0.1', port: 0, webSocket: { port: 0 } });
    const stream = await wsStream(b.wsUrl!, 4096);
    const reader = new FrameReader({ maxFrameSize: 1024 * 1024 });
    reader.expectProtocolHeader();
    const seen: { type: string; error?: AmqpErrorBody }[] = [];
    let opened!: () => void;
    const openSeen = new Promise<void>((r) => {
      opened = r;
    });
    stream.on('data', (d: Buffer) => {
      reader.push(d);
      for (let f = reader.next(); f !== undefined; f = reader.next()) {
        if (f.kind !== 'amqp') continue;
        const body = f.performative.body as { error?: AmqpErrorBody };
        seen.push({ type: f.performative.type, ...(body?.error ? { error: body.error } : {}) });
        if (f.performative.type === 'open') opened();
      }
    });
    const ended = new Promise<void>((r) => stream.once('close', () => r()));
    stream.on('error', () => {});
    stream.write(encodeProtocolHeader(0));
    stream.write(encodeAmqpFrame(0, { type: 'open', body: { containerId: 'ws-stop' } }));
    await openSeen;
    await b.stop();
    await ended;
    const close = seen.find((s) => s.type === 'close');
    expect(close?.error?.condition).toBe('amqp:connection:forced');
  });
});
