/**
 * Hand-crafted hostile frame sequences against a server-role engine: each violation must be
 * raised at the narrowest scope the spec names.
 */
import { describe, expect, it } from 'vitest';
import type { Attach, Transfer } from '../../src/codec/index.js';
import {
  type EngineEvent,
  type EngineOptions,
  ProtocolConnection,
  type ReceiverLink,
} from '../../src/protocol/index.js';
import { RawPeer, tag } from './harness.js';

interface Rig {
  server: ProtocolConnection;
  raw: RawPeer;
  events: EngineEvent[];
  /** poll the server's events, answer attaches (accept + `credit`) */
  step(): void;
}

function rig(opts: Partial<EngineOptions> = {}, credit = 10): Rig {
  const server = new ProtocolConnection({ role: 'server', open: { containerId: 's' }, ...opts });
  const raw = new RawPeer(server);
  const events: EngineEvent[] = [];
  const step = () => {
    for (const e of server.pollEvents()) {
      events.push(e);
      if (e.type === 'attach-request') {
        e.link.accept({ target: e.attach.target, source: e.attach.source });
        if (e.link.role === 'receiver') (e.link as ReceiverLink).flow(credit);
      }
    }
    raw.read();
  };
  return { server, raw, events, step };
}

function opened(opts: Partial<EngineOptions> = {}, credit = 10): Rig {
  const r = rig(opts, credit);
  r.raw.header(0).frame(0, { type: 'open', body: { containerId: 'raw' } });
  r.step();
  return r;
}

function begun(opts: Partial<EngineOptions> = {}, credit = 10): Rig {
  const r = opened(opts, credit);
  r.raw.frame(3, { type: 'begin', body: { nextOutgoingId: 0, incomingWindow: 100, outgoingWindow: 100 } });
  r.step();
  return r;
}

const senderAttach = (handle: number, name = `l${handle}`): Attach => ({
  name,
  handle,
  role: false,
  target: { address: 'q' },
  initialDeliveryCount: 0,
});

const transfer = (handle: number, id: number, more = false): Transfer => ({
  handle,
  deliveryId: id,
  deliveryTag: tag(id),
  more,
});

function attached(opts: Partial<EngineOptions> = {}, credit = 10): Rig {
  const r = begun(opts, credit);
  r.raw.frame(3, { type: 'attach', body: senderAttach(0) });
  r.step();
  return r;
}

function closeError(r: Rig) {
  return r.raw.sent('close')[0]?.error;
}

describe('hostile peers', () => {
  it('a frame before open: close with amqp:illegal-state', () => {
    const r = rig();
    r.raw
      .header(0)
      .frame(0, { type: 'begin', body: { nextOutgoingId: 0, incomingWindow: 1, outgoingWindow: 1 } });
    r.step();
    expect(closeError(r)?.condition).toBe('amqp:illegal-state');
    expect(r.server.state).toBe('close-sent');
    expect(r.events.some((e) => e.type === 'protocol-error' && e.scope === 'connection')).toBe(true);
  });

  it('attach before begin: close with amqp:illegal-state', () => {
    const r = opened();
    r.raw.frame(0, { type: 'attach', body: senderAttach(0) });
    r.step();
    expect(closeError(r)?.condition).toBe('amqp:illegal-state');
  });

  it('a second open: close with amqp:illegal-state', () => {
    const r = opened();
    r.raw.frame(0, { type: 'open', body: { containerId: 'again' } });
    r.step();
    expect(closeError(r)?.condition).toBe('amqp:illegal-state');
  });

  it('begin on a channel above channel-max: close with framing-error', () => {
    const r = opened({ open: { containerId: 's', channelMax: 3 } });
    r.raw.frame(4, { type: 'begin', body: { nextOutgoingId: 0, incomingWindow: 1, outgoingWindow: 1 } });
    r.step();
    expect(closeError(r)?.condition).toBe('amqp:connection:framing-error');
  });

  it('transfer on an unattached handle: end the session with amqp:session:unattached-handle', () => {
    const r = begun();
    r.raw.frame(3, { type: 'transfer', body: transfer(5, 0) }, Uint8Array.of(1));
    r.step();
    const end = r.raw.sent('end');
    expect(end[0].error?.condition).toBe('amqp:session:unattached-handle');
    expect(r.raw.sent('close')).toHaveLength(0);
    expect(r.events.some((e) => e.type === 'protocol-error' && e.scope === 'session')).toBe(true);
    // the session is gone once the peer answers; the connection lives on
    r.raw.frame(3, { type: 'end', body: {} });
    r.step();
    expect(r.events.some((e) => e.type === 'session-end')).toBe(true);
    r.raw.frame(3, { type: 'begin', body: { nextOutgoingId: 0, incomingWindow: 1, outgoingWindow: 1 } });
    r.step();
    expect(r.raw.sent('begin')).toHaveLength(2);
    expect(r.server.state).toBe('open');
  });

  it('flow and disposition/detach on unattached handles end the session too', () => {
    const r = begun();
    r.raw.frame(3, {
      type: 'flow',
      body: { incomingWindow: 1, nextOutgoingId: 0, outgoingWindow: 1, handle: 9, linkCredit: 1 },
    });
    r.step();
    expect(r.raw.sent('end')[0].error?.condition).toBe('amqp:session:unattached-handle');
    const r2 = begun();
    r2.raw.frame(3, { type: 'detach', body: { handle: 2 } });
    r2.step();
    expect(r2.raw.sent('end')[0].error?.condition).toBe('amqp:session:unattached-handle');
  });

  it('attach on a handle in use: end the session with amqp:session:handle-in-use', () => {
    const r = attached();
    r.raw.frame(3, { type: 'attach', body: senderAttach(0, 'other') });
    r.step();
    expect(r.raw.sent('end')[0].error?.condition).toBe('amqp:session:handle-in-use');
  });

  it('transfers beyond the session incoming-window: end with amqp:session:window-violation', () => {
    const r = attached({ incomingWindow: 2 }, 100);
    expect(r.raw.sent('begin')[0].incomingWindow).toBe(2);
    r.raw.frame(3, { type: 'transfer', body: transfer(0, 0) }, Uint8Array.of(1));
    r.raw.frame(3, { type: 'transfer', body: transfer(0, 1) }, Uint8Array.of(1));
    r.raw.frame(3, { type: 'transfer', body: transfer(0, 2) }, Uint8Array.of(1));
    r.step();
    expect(r.raw.sent('end')[0].error?.condition).toBe('amqp:session:window-violation');
    expect(r.events.filter((e) => e.type === 'message')).toHaveLength(2);
  });

  it('a transfer beyond link-credit: detach the link with amqp:link:transfer-limit-exceeded', () => {
    const r = attached({}, 1);
    r.raw.frame(3, { type: 'transfer', body: transfer(0, 0) }, Uint8Array.of(1));
    r.raw.frame(3, { type: 'transfer', body: transfer(0, 1) }, Uint8Array.of(2));
    r.step();
    const det = r.raw.sent('detach');
    expect(det[0].error?.condition).toBe('amqp:link:transfer-limit-exceeded');
    expect(det[0].closed).toBe(true);
    expect(r.raw.sent('end')).toHaveLength(0);
    expect(r.events.filter((e) => e.type === 'message')).toHaveLength(1);
    const pe = r.events.find((e) => e.type === 'protocol-error');
    expect(pe?.type === 'protocol-error' && pe.link?.name).toBe('l0');
    // transfers still in flight are dropped quietly until the peer's detach
    r.raw.frame(3, { type: 'transfer', body: transfer(0, 2) }, Uint8Array.of(3));
    r.raw.frame(3, { type: 'detach', body: { handle: 0, closed: true } });
    r.step();
    expect(r.raw.sent('end')).toHaveLength(0);
    const d = r.events.find((e) => e.type === 'link-detached');
    expect(d).toMatchObject({ byPeer: false, closed: true });
  });

  it('a multi-frame message over max-message-size: detach with amqp:link:message-size-exceeded', () => {
    const r = begun({}, 10);
    r.server.pollEvents();
    r.raw.frame(3, { type: 'attach', body: senderAttach(0) });
    for (const e of r.server.pollEvents()) {
      if (e.type === 'attach-request') {
        e.link.accept({ target: e.attach.target, maxMessageSize: 100 });
        (e.link as ReceiverLink).flow(5);
      }
    }
    r.raw.read();
    expect(r.raw.sent('attach')[0].maxMessageSize).toBe(100);
    r.raw.frame(3, { type: 'transfer', body: transfer(0, 0, true) }, new Uint8Array(60));
    r.raw.frame(3, { type: 'transfer', body: { handle: 0, more: true } }, new Uint8Array(60));
    r.step();
    expect(r.raw.sent('detach')[0].error?.condition).toBe('amqp:link:message-size-exceeded');
  });

  it('the engine-wide max message size applies when the link declares none', () => {
    const r = attached({ maxMessageSize: 50 }, 10);
    r.raw.frame(3, { type: 'transfer', body: transfer(0, 0) }, new Uint8Array(51));
    r.step();
    expect(r.raw.sent('detach')[0].error?.condition).toBe('amqp:link:message-size-exceeded');
  });

  it('a frame over our max-frame-size: close with amqp:connection:framing-error', () => {
    const r = attached({ open: { containerId: 's', maxFrameSize: 4096 } }, 10);
    r.raw.frame(3, { type: 'transfer', body: transfer(0, 0) }, new Uint8Array(5000));
    r.step();
    expect(closeError(r)?.condition).toBe('amqp:connection:framing-error');
    expect(r.server.state).toBe('closed');
  });

  it('before our Open is sent, frames are limited to 512 bytes', () => {
    const r = rig();
    r.raw.header(0).frame(0, { type: 'open', body: { containerId: 'x'.repeat(600) } });
    r.step();
    expect(r.server.state).toBe('closed');
    expect(
      r.events.some(
        (e) => e.type === 'protocol-error' && e.error.condition === 'amqp:connection:framing-error',
      ),
    ).toBe(true);
  });

  it('garbage after open: close with the codec condition', () => {
    const r = opened();
    r.raw.bytes(Uint8Array.of(0, 0, 0, 12, 2, 0, 0, 0, 0x00, 0x53, 0x99, 0x45));
    r.step();
    expect(closeError(r)?.condition).toBe('amqp:decode-error');
    expect(r.server.state).toBe('closed');
  });

  it('malformed frame header (doff < 2): framing-error', () => {
    const r = opened();
    r.raw.bytes(Uint8Array.of(0, 0, 0, 8, 1, 0, 0, 0));
    r.step();
    expect(closeError(r)?.condition).toBe('amqp:connection:framing-error');
  });

  it('a SASL frame in the AMQP layer: the connection stops', () => {
    const r = opened();
    r.raw.sasl({ type: 'sasl-init', body: { mechanism: 'ANONYMOUS' } });
    r.step();
    expect(r.server.state).toBe('closed');
  });

  it('after we sent Close, input other than Close is ignored', () => {
    const r = attached({}, 10);
    r.server.close({ condition: 'amqp:connection:forced', description: 'bye' });
    r.step();
    const before = r.events.length;
    r.raw.frame(3, { type: 'transfer', body: transfer(0, 0) }, Uint8Array.of(1));
    r.raw.frame(3, { type: 'attach', body: senderAttach(1) });
    r.raw.frame(0, { type: 'open', body: { containerId: 'zzz' } });
    r.step();
    expect(r.events.length).toBe(before);
    expect(r.raw.sent('close')).toHaveLength(1);
    r.raw.frame(0, { type: 'close', body: {} });
    r.step();
    expect(r.server.state).toBe('closed');
    expect(r.events.at(-1)).toMatchObject({
      type: 'closed',
      byPeer: false,
      error: { condition: 'amqp:connection:forced' },
    });
  });

  it('the peer closes with an error: we answer Close and report it', () => {
    const r = opened();
    r.raw.frame(0, {
      type: 'close',
      body: { error: { condition: 'amqp:connection:forced', description: 'x' } },
    });
    r.step();
    expect(r.raw.sent('close')).toEqual([{}]);
    expect(r.events.find((e) => e.type === 'remote-close')).toMatchObject({
      error: { condition: 'amqp:connection:forced' },
    });
    expect(r.server.state).toBe('closed');
  });

  it('refusing an attach: attach with a null terminus, then detach with the error', () => {
    const r = begun();
    r.raw.frame(3, { type: 'attach', body: senderAttach(0) });
    for (const e of r.server.pollEvents()) {
      if (e.type === 'attach-request')
        e.link.refuse({ condition: 'amqp:not-found', description: 'no such queue' });
    }
    const attach = r.raw.sent('attach');
    expect(attach[0].role).toBe(true);
    expect(attach[0].target).toBeUndefined();
    const det = r.raw.sent('detach');
    expect(det[0]).toMatchObject({
      handle: attach[0].handle,
      closed: true,
      error: { condition: 'amqp:not-found' },
    });
  });

  it('a flow pipelined right after the attach is applied once the link is accepted', () => {
    const r = begun();
    const rcvAttach: Attach = { name: 'r', handle: 4, role: true, source: { address: 'q' } };
    r.raw.frame(3, { type: 'attach', body: rcvAttach });
    r.raw.frame(3, {
      type: 'flow',
      body: {
        nextIncomingId: 0,
        incomingWindow: 100,
        nextOutgoingId: 0,
        outgoingWindow: 100,
        handle: 4,
        deliveryCount: 0,
        linkCredit: 7,
      },
    });
    const events = r.server.pollEvents();
    const req = events.find((e) => e.type === 'attach-request');
    if (req?.type !== 'attach-request') throw new Error('no attach-request');
    req.link.accept({ source: req.attach.source });
    expect(req.link.credit).toBe(7);
  });

  it('a new delivery before the previous multi-frame one finished: detach with invalid-field', () => {
    const r = attached({}, 10);
    r.raw.frame(3, { type: 'transfer', body: transfer(0, 0, true) }, Uint8Array.of(1));
    r.raw.frame(3, { type: 'transfer', body: transfer(0, 1) }, Uint8Array.of(2));
    r.step();
    expect(r.raw.sent('detach')[0].error?.condition).toBe('amqp:invalid-field');
    expect(r.events.filter((e) => e.type === 'message')).toHaveLength(0);
  });

  it('detach() on an unanswered attach refuses it', () => {
    const r = begun();
    r.raw.frame(3, { type: 'attach', body: senderAttach(0) });
    const req = r.server.pollEvents().find((e) => e.type === 'attach-request');
    if (req?.type !== 'attach-request') throw new Error('no attach-request');
    req.link.detach({ condition: 'amqp:unauthorized-access', description: 'no' });
    expect(r.raw.sent('attach')).toHaveLength(1);
    expect(r.raw.sent('detach')[0].error?.condition).toBe('amqp:unauthorized-access');
  });
});

describe('nothing after our End', () => {
  it('a handle-in-use End: answering the pending attach request or detaching writes nothing', () => {
    const r = attached();
    r.raw.frame(3, { type: 'attach', body: senderAttach(0, 'dup') });
    const before = r.raw.read().length;
    const links = r.events
      .filter((e) => e.type === 'attach-request')
      .map((e) => e.type === 'attach-request' && e.link);
    for (const e of r.server.pollEvents()) r.events.push(e);
    expect(r.raw.sent('end')[0].error?.condition).toBe('amqp:session:handle-in-use');
    const n = r.raw.frames.length;
    for (const l of links) if (l) l.detach({ condition: 'amqp:internal-error' });
    r.raw.read();
    expect(r.raw.frames.length).toBe(n);
    expect(before).toBeGreaterThan(0);
  });
});
