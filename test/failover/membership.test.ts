import { describe, expect, it } from 'vitest';
import { symbol, Typed, ushort } from '../../src/codec/typed.js';
import {
  failoverListFromOpenProperties,
  mapGet,
  parseMember,
  parseMemberList,
} from '../../src/wire-extensions.js';

describe('membership lists', () => {
  it('parses plain-object maps with int or string ports and quorate keys', () => {
    const list = [
      {
        'network-host': 'n1',
        port: 5701,
        scheme: 'amqp',
        hostname: 'vh',
        'quorate:member-id': 'm1',
        'quorate:quorate': true,
        'quorate:leader': true,
      },
      { 'network-host': 'n2', port: '5702', 'quorate:quorate': false },
    ];
    expect(parseMemberList(list)).toEqual({
      members: [
        {
          host: 'n1',
          port: 5701,
          scheme: 'amqp',
          hostname: 'vh',
          memberId: 'm1',
          quorate: true,
          leader: true,
        },
        { host: 'n2', port: 5702, quorate: false },
      ],
      invalid: 0,
    });
  });

  it('accepts Maps keyed by symbols and Typed values', () => {
    const m = new Map<unknown, unknown>([
      [symbol('network-host'), 'n3'],
      [symbol('port'), ushort(5703)],
      [symbol('scheme'), symbol('amqps')],
    ]);
    expect(parseMember(m)).toEqual({ host: 'n3', port: 5703, scheme: 'amqps' });
    expect(mapGet(m, 'port')).toBe(5703);
    // a list wrapped as a Typed list, bigint ports
    const wrapped = new Typed('list', [{ 'network-host': 'n4', port: 5704n }]);
    expect(parseMemberList(wrapped)?.members).toEqual([{ host: 'n4', port: 5704 }]);
  });

  it('skips unusable entries and counts them', () => {
    const r = parseMemberList([
      { port: 1 },
      { 'network-host': 'x', port: 'abc' },
      { 'network-host': 'x', port: 70000 },
      { 'network-host': 'x', scheme: 'gopher' }, // ws and wss are schemes now (docs/websocket.md)
      'junk',
      { 'network-host': 'ok' },
    ]);
    expect(r).toEqual({ members: [{ host: 'ok' }], invalid: 5 });
  });

  it('absent or non-list is undefined; an empty list is empty', () => {
    expect(parseMemberList(undefined)).toBeUndefined();
    expect(parseMemberList(null)).toBeUndefined();
    expect(parseMemberList({})).toBeUndefined();
    expect(parseMemberList([])).toEqual({ members: [], invalid: 0 });
    expect(failoverListFromOpenProperties(undefined)).toBeUndefined();
    expect(failoverListFromOpenProperties({ other: 1 })).toBeUndefined();
    expect(
      failoverListFromOpenProperties({ 'failover-server-list': [{ 'network-host': 'a', port: 1 }] })?.members,
    ).toEqual([{ host: 'a', port: 1 }]);
  });
});
