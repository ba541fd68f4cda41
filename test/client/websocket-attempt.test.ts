/**
 * A WebSocket connection attempt is one attempt like a TCP one (docs/websocket.md#client): giving
 * it up stops the WebSocket being opened, and it leaves nothing on the connection's stop signal,
 * which lives as long as the connection and sees every attempt of every failover.
 */
import { getEventListeners } from 'node:events';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { connectPhysical } from '../../src/client/transport.js';
import { parseServerUrl } from '../../src/failover/index.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

/** A TCP server on 127.0.0.1 that accepts and never answers; reports each socket it accepted. */
async function silentServer(): Promise<{ port: number; accepted: Promise<net.Socket> }> {
  const sockets = new Set<net.Socket>();
  let onAccept: (s: net.Socket) => void = () => undefined;
  const accepted = new Promise<net.Socket>((resolve) => {
    onAccept = resolve;
  });
  const srv = net.createServer((s) => {
    sockets.add(s);
    s.on('error', () => undefined);
    // read (and drop) what the client sends, so its hang-up is seen
    s.resume();
    onAccept(s);
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        srv.close(() => resolve());
      }),
  );
  return { port: (srv.address() as net.AddressInfo).port, accepted };
}

/** A port on 127.0.0.1 nothing listens on (bound, then released). */
async function refusingPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

const attempt = (url: string, signal: AbortSignal, extra: { firstByteDeadlineMs?: number } = {}) =>
  connectPhysical({
    server: parseServerUrl(url),
    containerId: 'websocket-attempt-test',
    idleTimeoutMs: 0,
    maxFrameSize: 65_536,
    timeoutMs: 60_000,
    signal,
    ...extra,
  });

describe('a WebSocket connection attempt', () => {
  it('leaves no listener on the stop signal once it failed, attempt after attempt', async () => {
    const port = await refusingPort();
    const stop = new AbortController();
    for (let i = 0; i < 15; i++) {
      await expect(attempt(`ws://127.0.0.1:${port}`, stop.signal)).rejects.toMatchObject({
        condition: 'quorate:connect-failed',
      });
      expect(getEventListeners(stop.signal, 'abort')).toHaveLength(0);
    }
  });

  it('stops opening the WebSocket when its first-byte deadline gives it up', async () => {
    const server = await silentServer();
    const stop = new AbortController();
    const failed = attempt(`ws://127.0.0.1:${server.port}`, stop.signal, { firstByteDeadlineMs: 200 });
    const socket = await server.accepted;
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    await expect(failed).rejects.toMatchObject({ condition: 'quorate:connect-failed' });
    // the attempt's own 60 s timeout is far off: only the give-up can close it this soon
    await closed;
    expect(getEventListeners(stop.signal, 'abort')).toHaveLength(0);
  });
});
