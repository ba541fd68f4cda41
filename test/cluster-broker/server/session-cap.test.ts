/**
 * The per-connection session cap (`--max-sessions-per-connection N`, declared as channel-max N-1
 * in the broker's Open): a Begin above it closes that connection with a framing error; sessions
 * within it work, and other connections are untouched.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { InProcessBroker, type Peer } from '../../fuzz/harness.js';
import { sentConditions } from '../../fuzz/invariants.js';
import * as S from '../../fuzz/script.js';

let broker: InProcessBroker | undefined;
afterEach(async () => {
  await broker?.close();
  broker = undefined;
});

async function opened(b: InProcessBroker): Promise<Peer> {
  const p = b.peer();
  p.feed(S.concat([S.SASL_HEADER, S.saslInit(), S.AMQP_HEADER, S.open()]));
  await p.settle();
  return p;
}

describe('sessions per connection', () => {
  it('declares the cap in Open and closes a connection that begins one session too many', async () => {
    broker = new InProcessBroker({ channelMax: 1 }); // two sessions: channels 0 and 1
    const p = await opened(broker);
    const open = p.performatives().find((f) => f.p.type === 'open');
    expect(open?.p.type === 'open' ? open.p.body.channelMax : undefined).toBe(1);
    p.feed(S.concat([S.begin(0), S.begin(1)]));
    await p.settle();
    expect(p.performatives().filter((f) => f.p.type === 'begin')).toHaveLength(2);
    expect(sentConditions(p).close).toBeUndefined();

    const other = await opened(broker);
    p.feed(S.begin(2));
    await p.settle();
    expect(sentConditions(p).close).toBe('amqp:connection:framing-error');

    // another connection still gets its sessions
    other.feed(S.begin(0));
    await other.settle();
    expect(other.performatives().filter((f) => f.p.type === 'begin')).toHaveLength(1);
    expect(other.ended).toBe(false);
  });
});
