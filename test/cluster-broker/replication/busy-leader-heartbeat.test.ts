/**
 * A leader whose timers do not run (its event loop is working through one long round of I/O
 * callbacks) still sends its heartbeats once they are due, from the inputs it handles
 * (docs/cluster-member.md#fresh-start). The real Replica on a captured transport, a timer fired
 * by hand and a fake clock.
 */
import { expect, it } from 'vitest';
import { settle, startCapturedLeader } from './captured-leader.js';

it('a leader sends due heartbeats from its inputs when its ticks are late', async () => {
  const { replica, sent, clock, deliver, tick, close } = await startCapturedLeader();
  try {
    clock.now += 10;
    tick();
    await settle();
    // from here on no tick runs (a long round of I/O callbacks), but n2's answers keep coming in
    const lastTickAt = clock.now;
    for (let i = 0; i < 30; i++) {
      clock.now += 20;
      deliver({ type: 'heartbeat-response', from: 'n2', to: 'n1', term: replica.term });
      await settle();
    }
    // what keeps n3 from electing another after 400-800 ms: the leader's heartbeats (or appends),
    // sent from its inputs while no tick runs (other messages, e.g. a snapshot offer to a member
    // that never answered, may come too: they are not what this counts)
    const toN3 = sent.filter(
      (s) => s.m.to === 'n3' && s.at > lastTickAt + 50 && (s.m.type === 'heartbeat' || s.m.type === 'append'),
    );
    expect(toN3.length).toBeGreaterThanOrEqual(5);
  } finally {
    await close();
  }
});
