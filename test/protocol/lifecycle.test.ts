import { describe, expect, it } from 'vitest';
import type { ReceiverLink, SenderLink } from '../../src/protocol/index.js';
import { autoServer, openSession, pair, tag, utf8 } from './harness.js';

describe('endpoint lifecycle', () => {
  it('credit granted before the peer attached is sent once it has', () => {
    const p = pair();
    autoServer(p);
    const s = openSession(p);
    const rcv = s.attachReceiver({ name: 'early', source: { address: 'q' } });
    rcv.flow(5);
    p.run();
    const sl = p.server.of('attach-request')[0].link as SenderLink;
    expect(sl.credit).toBe(5);
  });

  it('pipelining: begin/attach/flow/send before the server Open (and during SASL) all work', () => {
    const p = pair({ sasl: { mechanism: 'ANONYMOUS' } });
    autoServer(p);
    const s = p.client.engine.begin();
    const snd = s.attachSender({ name: 'p', target: { address: 'q' } });
    const d = snd.send(tag(1), utf8('x'));
    expect(d.status).toBe('queued');
    p.run();
    expect(d.status).toBe('sent');
    expect(p.server.of('message')).toHaveLength(1);
  });

  it('client detach, server detach with error, session end and close', () => {
    const p = pair();
    autoServer(p);
    const s = openSession(p);
    const a = s.attachSender({ name: 'a', target: { address: 'q' } });
    const b = s.attachReceiver({ name: 'b', source: { address: 'q' } });
    p.run();
    a.detach();
    p.run();
    expect(a.state).toBe('detached');
    const sd = p.server.of('link-detached')[0];
    expect(sd).toMatchObject({ byPeer: true, closed: true });
    expect(p.client.of('link-detached')[0]).toMatchObject({ byPeer: false, closed: true });

    const serverB = p.server.of('attach-request').find((e) => e.link.name === 'b')!.link;
    serverB.detach({ condition: 'amqp:resource-deleted', description: 'queue deleted' });
    p.run();
    expect(b.state).toBe('detached');
    expect(p.client.of('link-detached')[1]).toMatchObject({
      byPeer: true,
      error: { condition: 'amqp:resource-deleted' },
    });
    expect(() => a.send(tag(1), utf8('x'))).toThrow();

    const c = s.attachSender({ name: 'c', target: { address: 'q' } });
    p.run();
    s.end();
    p.run();
    expect(s.state).toBe('ended');
    expect(c.state).toBe('detached');
    expect(p.server.of('session-end')[0].byPeer).toBe(true);
    expect(p.client.of('session-end')[0].byPeer).toBe(false);
    // handles and channels are reusable
    const s2 = p.client.engine.begin();
    p.run();
    expect(s2.channel).toBe(0);
    const c2 = s2.attachSender({ name: 'c', target: { address: 'q' } });
    expect(c2.handle).toBe(0);
    p.run();
    expect(c2.state).toBe('attached');
  });

  it('server-initiated attach reaches the client as attach-request', () => {
    const p = pair();
    p.run();
    p.client.engine.begin();
    p.run();
    const ss = p.server.of('session-begin')[0].session;
    const sl = ss.attachSender({ name: 'push', source: { address: 'events' } });
    p.client.onEvent = (e) => {
      if (e.type === 'attach-request') {
        e.link.accept({ source: e.attach.source });
        (e.link as ReceiverLink).flow(3);
      }
    };
    p.run();
    expect(sl.state).toBe('attached');
    expect(sl.credit).toBe(3);
  });

  it('handle-max and channel-max bound allocation', () => {
    const p = pair({ open: { containerId: 'c', channelMax: 1 } });
    autoServer(p);
    p.run();
    const s = p.client.engine.begin({ handleMax: 1 });
    p.client.engine.begin();
    expect(() => p.client.engine.begin()).toThrow(/channel-max/);
    s.attachSender({ name: 'h0', target: {} });
    s.attachSender({ name: 'h1', target: {} });
    expect(() => s.attachSender({ name: 'h2', target: {} })).toThrow(/handle-max/);
    p.run();
    expect(p.server.of('attach-request')).toHaveLength(2);
  });

  it('transportClosed: unsettled sent deliveries stay in doubt, queued ones stay queued', () => {
    const p = pair();
    autoServer(p, 1);
    const s = openSession(p);
    const snd = s.attachSender({ name: 't', target: { address: 'q' } });
    p.run();
    const sent = snd.send(tag(1), utf8('a'));
    const queued = snd.send(tag(2), utf8('b'));
    p.client.engine.transportClosed();
    const ev = p.client.engine.pollEvents();
    expect(ev.at(-1)).toMatchObject({ type: 'closed', error: { condition: 'amqp:connection:forced' } });
    expect(sent.status).toBe('sent');
    expect(sent.settled).toBe(false);
    expect(queued.status).toBe('queued');
    expect(snd.pendingDeliveries()).toEqual([queued]);
    expect(snd.unsettled()).toEqual([sent]);
  });
});

describe('races', () => {
  it('detach before the peer answered the attach: the answer and its detach close the link cleanly', () => {
    const p = pair();
    autoServer(p);
    const s = openSession(p);
    const snd = s.attachSender({ name: 'quick', target: { address: 'q' } });
    snd.detach();
    p.run();
    expect(snd.state).toBe('detached');
    expect(p.server.of('attach-request')).toHaveLength(1);
    expect(p.server.of('link-detached')).toHaveLength(1);
    expect(p.client.of('attach-request')).toHaveLength(0);
    expect(p.client.of('link-attached')).toHaveLength(0);
    expect(p.client.of('protocol-error')).toHaveLength(0);
    expect(p.server.of('protocol-error')).toHaveLength(0);
    // the name can be attached again
    const again = s.attachSender({ name: 'quick', target: { address: 'q' } });
    p.run();
    expect(again.state).toBe('attached');
  });
});
