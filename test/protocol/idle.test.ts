import { describe, expect, it } from 'vitest';
import { ProtocolConnection } from '../../src/protocol/index.js';
import { pair, RawPeer } from './harness.js';

describe('idle timeout and heartbeats (fake clock)', () => {
  it('declares our idle-time-out; the peer sends heartbeats at half of it', () => {
    const p = pair({ open: { containerId: 'c', idleTimeOut: 1000 } }, {});
    p.run();
    expect(p.server.of('remote-open')[0].open.idleTimeOut).toBe(1000);
    const srv = p.server.engine;
    expect(srv.nextDeadline()).toBe(500);
    srv.tick(499);
    p.run();
    expect(p.s2c.heartbeats).toBe(0);
    srv.tick(500);
    p.run();
    expect(p.s2c.heartbeats).toBe(1);
    expect(srv.nextDeadline()).toBe(1000);
    // the client declared no timeout to... the server declared none: the client never heartbeats
    p.client.engine.tick(100000);
    p.run();
    expect(p.c2s.heartbeats).toBe(0);
  });

  it('both sides ticking: heartbeats keep an idle connection open for a long time', () => {
    const p = pair(
      { open: { containerId: 'c', idleTimeOut: 1000 } },
      { open: { containerId: 's', idleTimeOut: 600 } },
    );
    p.run();
    for (let t = 0; t <= 60000; t += 50) {
      p.client.engine.tick(t);
      p.server.engine.tick(t);
      p.run(); // bytes arrive at the engines' current time t
    }
    expect(p.client.engine.state).toBe('open');
    expect(p.server.engine.state).toBe('open');
    expect(p.c2s.heartbeats).toBeGreaterThan(150);
    expect(p.s2c.heartbeats).toBeGreaterThan(100);
  });

  it('a silent peer past our idle-time-out: close with amqp:resource-limit-exceeded', () => {
    const server = new ProtocolConnection({
      role: 'server',
      open: { containerId: 's', idleTimeOut: 2000 },
      now: 1000,
    });
    const raw = new RawPeer(server).header(0).frame(0, { type: 'open', body: { containerId: 'raw' } });
    raw.read();
    server.tick(2500);
    expect(server.state).toBe('open');
    server.receive(new Uint8Array([0, 0, 0, 8, 2, 0, 0, 0]), 2900); // a heartbeat resets the clock
    server.tick(4800);
    expect(server.state).toBe('open');
    server.tick(4901);
    expect(server.state).toBe('closed');
    const close = raw.sent('close');
    expect(close[0].error?.condition).toBe('amqp:resource-limit-exceeded');
    const ev = server.pollEvents();
    expect(ev.find((e) => e.type === 'closed')).toMatchObject({ byPeer: false });
    expect(server.nextDeadline()).toBeUndefined();
  });

  it('clock: the time of the last receive() or tick(), as the events of a read are handled', () => {
    const server = new ProtocolConnection({ role: 'server', open: { containerId: 's' }, now: 1000 });
    expect(server.clock).toBe(1000);
    const raw = new RawPeer(server).header(0).frame(0, { type: 'open', body: { containerId: 'raw' } });
    raw.read();
    server.receive(new Uint8Array([0, 0, 0, 8, 2, 0, 0, 0]), 2900);
    expect(server.clock).toBe(2900);
    server.receive(new Uint8Array([0, 0, 0, 8, 2, 0, 0, 0]));
    expect(server.clock).toBe(2900);
    server.tick(3100);
    expect(server.clock).toBe(3100);
  });
});
