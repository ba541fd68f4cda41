import { describe, expect, it } from 'vitest';
import { Typed } from '../../src/codec/index.js';
import type { OutgoingDelivery, SenderLink } from '../../src/protocol/index.js';
import { autoServer, openSession as open, pair, tag, utf8 } from './harness.js';

describe('engine pair: open / begin / attach / transfer', () => {
  it('opens with properties and capabilities passing through both ways', () => {
    const serverList = [{ 'network-host': 'h1', port: 5672 }];
    const p = pair(
      {
        open: {
          containerId: 'c1',
          hostname: 'example',
          desiredCapabilities: ['quorate:membership'],
          properties: { product: 'quorate' },
        },
      },
      {
        open: {
          containerId: 's1',
          offeredCapabilities: ['quorate:membership'],
          properties: { 'failover-server-list': serverList },
        },
      },
    );
    p.run();
    expect(p.client.engine.state).toBe('open');
    expect(p.server.engine.state).toBe('open');
    const so = p.client.of('remote-open')[0].open;
    expect(so.containerId).toBe('s1');
    expect(so.offeredCapabilities).toEqual(['quorate:membership']);
    expect(so.properties?.['failover-server-list']).toEqual(serverList);
    const co = p.server.of('remote-open')[0].open;
    expect(co.containerId).toBe('c1');
    expect(co.hostname).toBe('example');
    expect(co.desiredCapabilities).toEqual(['quorate:membership']);
    expect(co.properties).toEqual({ product: 'quorate' });
    p.client.engine.close();
    p.run();
    expect(p.client.engine.state).toBe('closed');
    expect(p.server.engine.state).toBe('closed');
    expect(p.server.of('remote-close')).toHaveLength(1);
    expect(p.client.of('closed')[0].byPeer).toBe(false);
    expect(p.server.of('closed')[0].byPeer).toBe(true);
    void Typed;
  });

  it('sends messages client -> server and server -> client', () => {
    const p = pair({}, {}, 7);
    autoServer(p);
    const s = open(p);
    expect(p.server.of('session-begin')).toHaveLength(1);
    const snd = s.attachSender({ name: 'out', target: { address: 'q1' } });
    const rcv = s.attachReceiver({ name: 'in', source: { address: 'q2' } });
    p.run();
    expect(snd.state).toBe('attached');
    expect(snd.credit).toBe(100);
    const ds: OutgoingDelivery[] = [];
    for (let i = 0; i < 50; i++) ds.push(snd.send(tag(i), utf8(`m${i}`)));
    expect(ds.every((d) => d.written && d.status === 'sent')).toBe(true);
    p.run();
    const got = p.server.of('message');
    expect(got.map((m) => new TextDecoder().decode(m.delivery.payload))).toEqual(ds.map((_, i) => `m${i}`));
    for (const m of got) m.delivery.accept();
    p.run();
    expect(ds.every((d) => d.remoteState?.type === 'accepted' && d.settled)).toBe(true);

    // server -> client
    const sl = p.server.of('attach-request').find((e) => e.link.role === 'sender')!.link as SenderLink;
    rcv.flow(10);
    p.run();
    expect(sl.credit).toBe(10);
    for (let i = 0; i < 12; i++) sl.send(tag(i), utf8(`r${i}`));
    expect(sl.queued).toBe(2);
    p.run();
    expect(p.client.of('message')).toHaveLength(10);
    rcv.addCredit(5);
    p.run();
    expect(p.client.of('message')).toHaveLength(12);
    expect(sl.credit).toBe(3);
  });
});
