import { describe, expect, it } from 'vitest';
import type { ReceiverLink, SenderLink } from '../../src/protocol/index.js';
import { autoServer, openSession, pair, tag, utf8 } from './harness.js';

// docs/failover.md#unresponsive: what the client's silence watch asks of the engine
describe('awaiting the peer, and the echo probe', () => {
  it('a written, unsettled delivery is awaited until the peer settles it', () => {
    const p = pair();
    autoServer(p);
    const s = openSession(p);
    const snd = s.attachSender({ name: 'o', target: { address: 'q' } });
    p.run();
    expect(p.client.engine.awaitingPeer()).toBe(false);
    snd.send(tag(1), utf8('m'));
    p.run();
    expect(p.client.engine.awaitingPeer()).toBe(true);
    p.server.of('message')[0].delivery.accept();
    p.run();
    expect(p.client.engine.awaitingPeer()).toBe(false);
  });

  it('probe(): a session flow with echo, which the peer answers with a flow', () => {
    const p = pair();
    openSession(p);
    const flowsBefore = p.s2c.of('flow').length;
    expect(p.client.engine.probe()).toBe(true);
    p.run();
    const asked = p.c2s.of('flow');
    expect(asked[asked.length - 1]).toMatchObject({ echo: true });
    expect(asked[asked.length - 1].handle).toBeUndefined();
    const answers = p.s2c.of('flow').slice(flowsBefore);
    expect(answers).toHaveLength(1);
    expect(answers[0].echo).toBeFalsy(); // no echo back: no ping-pong
  });

  it('echoAnswered: learned from the session flow that answers our echo, not before', () => {
    const p = pair();
    openSession(p);
    expect(p.client.engine.echoAnswered).toBe(false);
    p.client.engine.probe();
    p.run();
    expect(p.client.engine.echoAnswered).toBe(true);
  });

  it('a peer not known to answer echo is also sent a Begin, ended once answered, unreported', () => {
    const p = pair();
    const s = openSession(p);
    const beginsBefore = p.c2s.of('begin').length;
    const clientBeginEvents = p.client.events.filter((e) => e.type === 'session-begin').length;
    expect(p.client.engine.answersProbes).toBe(false);
    expect(p.client.engine.probe()).toBe(true);
    p.run();
    expect(p.c2s.of('begin')).toHaveLength(beginsBefore + 1);
    expect(p.c2s.of('end')).toHaveLength(1); // the probe session, ended once answered
    expect(p.client.engine.beginAnswered).toBe(true);
    expect(p.client.engine.answersProbes).toBe(true);
    expect(p.client.events.filter((e) => e.type === 'session-begin')).toHaveLength(clientBeginEvents);
    expect(s.state).toBe('mapped'); // the session in use is untouched
    // the echo was answered too: later probes are flows only
    p.client.engine.probe();
    p.run();
    expect(p.c2s.of('begin')).toHaveLength(beginsBefore + 1);
  });

  it('probe(true) asks by echo only', () => {
    const p = pair();
    openSession(p);
    const beginsBefore = p.c2s.of('begin').length;
    expect(p.client.engine.probe(true)).toBe(true);
    p.run();
    expect(p.c2s.of('begin')).toHaveLength(beginsBefore);
    expect(p.client.engine.beginAnswered).toBe(false);
  });

  it('probe() with no session mapped asks nothing', () => {
    const p = pair();
    p.run();
    expect(p.client.engine.probe()).toBe(false);
  });

  it('credit granted with messages the sender says it holds is awaited until they arrive', () => {
    const p = pair();
    let serverSender: SenderLink | undefined;
    p.server.onEvent = (e) => {
      if (e.type === 'attach-request') {
        e.link.accept({ source: e.attach.source, target: e.attach.target });
        serverSender = e.link as SenderLink;
      }
    };
    const s = openSession(p);
    const rcv: ReceiverLink = s.attachReceiver({ name: 'i', source: { address: 'q' } });
    p.run();
    serverSender!.send(tag(1), utf8('a')); // no credit yet: queued at the sender
    serverSender!.send(tag(2), utf8('b'));
    rcv.flow(0, false, true); // ask for the sender's state: it says two are available
    p.run();
    expect(rcv.remoteAvailable).toBe(2);
    expect(p.client.engine.awaitingPeer()).toBe(false); // waiting, but no credit granted
    rcv.flow(1);
    expect(p.client.engine.awaitingPeer()).toBe(true); // the sender owes us one
    p.run();
    expect(p.client.of('message')).toHaveLength(1);
    expect(rcv.remoteAvailable).toBe(1);
    expect(p.client.engine.awaitingPeer()).toBe(false); // credit used up
  });
});
