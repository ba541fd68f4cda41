/**
 * Cross-check of the protocol engine against rhea 3.0.5 over loopback sockets: a rhea client
 * against our server-role engine, and our client-role engine against a rhea server.
 * Message bodies are encoded/decoded with rhea's own message codec so only the engine is tested.
 */
import { once } from 'node:events';
import net from 'node:net';
import rhea from 'rhea';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type EngineEvent,
  type EngineOptions,
  type OutgoingDelivery,
  ProtocolConnection,
  type ReceiverLink,
  type SenderLink,
} from '../../../src/protocol/index.js';
import { waitFor } from '../../support/net.js';

/** The smallest possible socket adapter: one cork/uncork write batch per microtask. */
function drive(
  socket: net.Socket,
  engine: ProtocolConnection,
  onEvent: (e: EngineEvent) => void,
): () => void {
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    for (;;) {
      const evs = engine.pollEvents();
      for (const e of evs) onEvent(e);
      const out = engine.takeOutput();
      if (out.length > 0) {
        socket.cork();
        for (const b of out) socket.write(b);
        socket.uncork();
      }
      if (evs.length === 0 && out.length === 0) break;
    }
    if (engine.state === 'closed') socket.end();
  };
  const schedule = () => {
    if (!scheduled) {
      scheduled = true;
      queueMicrotask(flush);
    }
  };
  socket.on('data', (d: Buffer) => {
    engine.receive(d, Date.now());
    schedule();
  });
  socket.on('error', () => {});
  schedule();
  return schedule;
}

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

describe('engine <-> rhea 3.0.5', () => {
  it('rhea client (SASL PLAIN) -> our server engine: send, receive, settle, close', async () => {
    const received: unknown[] = [];
    let serverSender: SenderLink | undefined;
    let serverEngine: ProtocolConnection | undefined;
    let wake: () => void = () => {};
    const server = net.createServer((sock) => {
      const opts: EngineOptions = {
        role: 'server',
        open: {
          containerId: 'quorate-test-server',
          maxFrameSize: 65536,
          offeredCapabilities: ['quorate:membership'],
          properties: { 'failover-server-list': [{ 'network-host': '127.0.0.1', port: 5672 }] },
        },
        sasl: { authenticate: (m, id) => m === 'PLAIN' && id.username === 'u' && id.password === 'p' },
      };
      const engine = new ProtocolConnection(opts);
      serverEngine = engine;
      wake = drive(sock, engine, (e) => {
        if (e.type === 'attach-request') {
          e.link.accept({ source: e.attach.source, target: e.attach.target });
          if (e.link.role === 'receiver') (e.link as ReceiverLink).flow(100);
          else serverSender = e.link as SenderLink;
        } else if (e.type === 'message') {
          const body = rhea.message.decode(Buffer.from(e.delivery.payload)).body;
          received.push(typeof body === 'string' && body.length > 1000 ? `big:${body.length}` : body);
          if (received.length % 3 === 0) e.delivery.release();
          else e.delivery.accept();
          (e.link as ReceiverLink).addCredit(1);
        }
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    cleanups.push(() => server.close());
    const port = (server.address() as net.AddressInfo).port;

    const container = rhea.create_container({ id: 'rhea-client' });
    const conn = container.connect({
      host: '127.0.0.1',
      port,
      username: 'u',
      password: 'p',
      reconnect: false,
    });
    cleanups.push(() => conn.close());
    let remoteOpen: { properties?: Record<string, unknown>; offered_capabilities?: unknown } | undefined;
    conn.on('connection_open', (ctx) => {
      remoteOpen = ctx.connection.remote.open as typeof remoteOpen;
    });
    const outcomes: string[] = [];
    conn.on('accepted', () => outcomes.push('accepted'));
    conn.on('released', () => outcomes.push('released'));
    const sender = conn.open_sender('q1');
    await once(sender, 'sendable');
    for (let i = 0; i < 30; i++) sender.send({ body: `hello ${i}` });
    await waitFor(() => outcomes.length === 30, { timeoutMs: 20_000, what: 'outcomes', intervalMs: 5 });
    expect(received).toEqual(Array.from({ length: 30 }, (_, i) => `hello ${i}`));
    expect(outcomes.filter((o) => o === 'released')).toHaveLength(10);
    // multi-frame: rhea splits to our 64 KiB max-frame-size, we reassemble
    sender.send({ body: 'x'.repeat(3 * 1024 * 1024) });
    await waitFor(() => received.length === 31, { timeoutMs: 20_000, what: 'big message', intervalMs: 5 });
    expect(received[30]).toBe(`big:${3 * 1024 * 1024}`);
    expect(remoteOpen?.properties?.['failover-server-list']).toBeDefined();

    // our server sends to a rhea receiver
    const got: unknown[] = [];
    const receiver = conn.open_receiver({ source: 'q2', credit_window: 10 });
    receiver.on('message', (ctx) => got.push(ctx.message?.body));
    await waitFor(() => serverSender !== undefined && serverSender.credit > 0, {
      timeoutMs: 20_000,
      what: 'credit from rhea',
      intervalMs: 5,
    });
    for (let i = 0; i < 25; i++) {
      serverSender!.send(Uint8Array.of(i), rhea.message.encode({ body: `to rhea ${i}` }));
    }
    wake();
    await waitFor(() => got.length === 25, { timeoutMs: 20_000, what: 'rhea to receive 25', intervalMs: 5 });
    expect(got[24]).toBe('to rhea 24');

    // drain from a rhea receiver: our sender sends what it has, then gives the rest of the credit back
    let drainSender: SenderLink | undefined;
    const drained: unknown[] = [];
    const dr = conn.open_receiver({ source: 'q3', credit_window: 0 });
    dr.on('message', (ctx) => drained.push(ctx.message?.body));
    let drainedEvent = false;
    dr.on('receiver_drained', () => {
      drainedEvent = true;
    });
    await once(dr, 'receiver_open');
    await waitFor(
      () => {
        drainSender = (serverEngine?.activeSessions() ?? [])
          .flatMap((s) => s.activeLinks())
          .find((l) => l.name === dr.name && l.role === 'sender') as SenderLink | undefined;
        return drainSender !== undefined;
      },
      { timeoutMs: 20_000, what: 'server side of the drain link', intervalMs: 5 },
    );
    for (let i = 0; i < 3; i++) drainSender!.send(Uint8Array.of(i), rhea.message.encode({ body: `d${i}` }));
    dr.add_credit(10);
    dr.drain_credit();
    await waitFor(() => drainedEvent, { timeoutMs: 20_000, what: 'receiver_drained', intervalMs: 5 });
    expect(drained).toEqual(['d0', 'd1', 'd2']);
    expect(drainSender!.credit).toBe(0);
    expect(drainSender!.deliveryCount).toBe(10);
    conn.close();
    await waitFor(() => serverEngine?.state === 'closed', {
      timeoutMs: 20_000,
      what: 'close',
      intervalMs: 5,
    });
  });

  it('our client engine -> rhea server (SASL PLAIN): send and receive', async () => {
    const container = rhea.create_container({ id: 'rhea-server' });
    container.sasl_server_mechanisms.enable_plain((u: string, p: string) => u === 'guest' && p === 'guest');
    const inbox: unknown[] = [];
    container.on('message', (ctx) => inbox.push(ctx.message?.body));
    let toSend = 40;
    container.on('sendable', (ctx) => {
      while (ctx.sender?.sendable() && toSend > 0) {
        ctx.sender.send({ body: `from rhea ${40 - toSend}` });
        toSend--;
      }
    });
    const listener = container.listen({ port: 0, host: '127.0.0.1' });
    await once(listener, 'listening');
    cleanups.push(() => listener.close());
    const port = (listener.address() as net.AddressInfo).port;

    const sock = net.connect(port, '127.0.0.1');
    cleanups.push(() => sock.destroy());
    await once(sock, 'connect');
    const engine = new ProtocolConnection({
      role: 'client',
      open: { containerId: 'quorate-client', hostname: 'localhost', idleTimeOut: 30000 },
      sasl: { mechanism: 'PLAIN', username: 'guest', password: 'guest' },
      now: Date.now(),
    });
    const msgs: unknown[] = [];
    const remoteStates: string[] = [];
    let opened = false;
    const wake = drive(sock, engine, (e) => {
      if (e.type === 'remote-open') opened = true;
      if (e.type === 'message') {
        msgs.push(rhea.message.decode(Buffer.from(e.delivery.payload)).body);
        e.delivery.accept();
      }
      if (e.type === 'delivery-update' && e.delivery.remoteState)
        remoteStates.push(e.delivery.remoteState.type);
    });
    const session = engine.begin();
    const snd = session.attachSender({ name: 'to-rhea', target: { address: 'examples' } });
    const rcv = session.attachReceiver({ name: 'from-rhea', source: { address: 'examples' } });
    rcv.flow(100);
    const ds: OutgoingDelivery[] = [];
    for (let i = 0; i < 50; i++)
      ds.push(snd.send(Uint8Array.of(i), rhea.message.encode({ body: `from quorate ${i}` })));
    // multi-frame: rhea declares no frame limit, we split at our own 1 MiB
    ds.push(snd.send(Uint8Array.of(50), rhea.message.encode({ body: 'y'.repeat(3 * 1024 * 1024) })));
    wake();
    await waitFor(() => opened, { timeoutMs: 20_000, what: 'open', intervalMs: 5 });
    await waitFor(() => inbox.length === 51 && msgs.length === 40, {
      timeoutMs: 20_000,
      what: 'messages both ways',
      intervalMs: 5,
    });
    expect(inbox[49]).toBe('from quorate 49');
    expect((inbox[50] as string).length).toBe(3 * 1024 * 1024);
    expect(msgs[39]).toBe('from rhea 39');
    await waitFor(() => ds.every((d) => d.settled), { timeoutMs: 20_000, what: 'settlement', intervalMs: 5 });
    expect(ds.every((d) => d.remoteState?.type === 'accepted')).toBe(true);
    expect(engine.remoteOpen?.containerId).toBe('rhea-server');
    engine.close();
    wake();
    await waitFor(() => engine.state === 'closed', {
      timeoutMs: 20_000,
      what: 'close handshake',
      intervalMs: 5,
    });
  });
});
