/** Learned members over WebSocket: the same transport, never weaker (scheme-policy.ts). */
import { describe, expect, it } from 'vitest';
import { type IgnoredMembers, ServerPool } from '../../src/failover/index.js';
import { memberListValue } from '../../src/wire-extensions.js';

const list = memberListValue([
  {
    id: 'n1',
    host: '10.0.0.1',
    port: 5672,
    scheme: 'amqp',
    quorate: true,
    leader: true,
    wsUrl: 'ws://10.0.0.1:5690',
  },
  {
    id: 'n2',
    host: '10.0.0.2',
    port: 5672,
    scheme: 'amqp',
    quorate: true,
    leader: false,
    wsUrl: 'ws://10.0.0.2:5690',
  },
  { id: 'n3', host: '10.0.0.3', port: 5672, scheme: 'amqp', quorate: true, leader: false },
]);

describe('scheme policy over WebSocket', () => {
  it('a client on ws learns the ws urls only; one on amqp the TCP addresses', () => {
    const ignored: IgnoredMembers[] = [];
    const ws = new ServerPool(['ws://10.0.0.1:5690'], {
      randomize: false,
      onIgnored: (i) => ignored.push(i),
    });
    ws.applyMemberList(list, ws.servers()[0]!);
    expect(
      ws
        .servers()
        .map((s) => `${s.scheme}://${s.key}`)
        .sort(),
    ).toEqual(['ws://10.0.0.1:5690', 'ws://10.0.0.2:5690']);
    expect(ignored).toMatchObject([{ reason: 'other-transport', count: 1 }]);
    const tcp = new ServerPool(['amqp://10.0.0.1:5672'], { randomize: false });
    tcp.applyMemberList(list, tcp.servers()[0]!);
    expect(tcp.servers().map((s) => s.scheme)).toEqual(['amqp', 'amqp', 'amqp']);
  });

  it('a client on wss never learns ws', () => {
    const ignored: IgnoredMembers[] = [];
    const pool = new ServerPool(['wss://10.0.0.1:5690'], {
      randomize: false,
      onIgnored: (i) => ignored.push(i),
    });
    pool.applyMemberList(list, pool.servers()[0]!);
    expect(pool.servers().map((s) => s.scheme)).toEqual(['wss']);
    expect(ignored.map((i) => i.reason).sort()).toEqual(['other-transport', 'weaker-scheme']);
  });
});
