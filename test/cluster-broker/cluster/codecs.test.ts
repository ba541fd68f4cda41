/** Byte layouts of the cluster member: log entries (with the leader's stamp) and member messages. */
import { describe, expect, it } from 'vitest';
import {
  linkKeyOf,
  memberOf,
  processKey,
  processOf,
  qualifyConsumer,
} from '../../../src/cluster-broker/cluster/consumer-keys.js';
import {
  decodeEntry,
  decodeEntryAndEvent,
  encodeEntry,
  stampEntry,
  stampEntryInPlace,
} from '../../../src/cluster-broker/cluster/entry-codec.js';
import {
  carry,
  decodeApp,
  encodeApp,
  withAppMessages,
} from '../../../src/cluster-broker/cluster/peer-wire.js';
import { decodeEvent, encodeEvent } from '../../../src/cluster-broker/core/event-codec.js';
import { UnsafeNumberError } from '../../../src/cluster-broker/replication/safe-numbers.js';
import { binaryWireCodec } from '../../../src/cluster-broker/replication/wire-binary.js';

describe('cluster entries', () => {
  it('round-trip every kind; the leader stamps its time into a copy', () => {
    const event = encodeEvent({
      type: 'enqueue',
      leaderTime: 5,
      queue: 'q',
      message: new Uint8Array([1, 2, 3]),
    });
    const req = encodeEntry('n1@abc', 7, { kind: 'event', event });
    const stamped = stampEntry(req, 1_700_000_000_123);
    expect(decodeEntry(req).leaderTime).toBe(0); // the request is not changed
    const e = decodeEntry(stamped);
    expect(e).toMatchObject({ leaderTime: 1_700_000_000_123, origin: 'n1@abc', seq: 7 });
    expect(e.body.kind).toBe('event');
    if (e.body.kind === 'event')
      expect(decodeEvent(e.body.event)).toMatchObject({ type: 'enqueue', queue: 'q' });
    expect(
      decodeEntry(encodeEntry('n2@x', 1, { kind: 'release-owner', member: 'n2', keep: 'x' })).body,
    ).toEqual({
      kind: 'release-owner',
      member: 'n2',
      keep: 'x',
    });
    expect(
      decodeEntry(encodeEntry('n3@y', 2, { kind: 'claim', link: 'c/l', claimant: 'n3@y|c/l' })).body,
    ).toEqual({
      kind: 'claim',
      link: 'c/l',
      claimant: 'n3@y|c/l',
    });
    expect(decodeEntry(encodeEntry('n1@z', 3, { kind: 'federation-owner', owner: 'n1@z' })).body).toEqual({
      kind: 'federation-owner',
      owner: 'n1@z',
    });
  });

  it('stamps in place at the time field only, and decodes the entries of several origins in turn', () => {
    const event = encodeEvent({ type: 'enqueue', leaderTime: 5, queue: 'q', message: new Uint8Array([9]) });
    const reqs = ['n1@a', 'n1@a', 'n2@b', 'n1@a'].map((o, i) =>
      encodeEntry(o, i + 1, { kind: 'event', event }),
    );
    const times = [1, -2.5, 1_700_000_000_123.25, 0];
    reqs.forEach((r, i) => {
      const before = Uint8Array.from(r);
      expect(stampEntryInPlace(r, times[i]!)).toBe(r);
      expect(r[0]).toBe(before[0]);
      expect(r.subarray(9)).toEqual(before.subarray(9));
    });
    expect(reqs.map((r) => decodeEntryAndEvent(r)).map((e) => [e.origin, e.seq, e.leaderTime])).toEqual([
      ['n1@a', 1, 1],
      ['n1@a', 2, -2.5],
      ['n2@b', 3, 1_700_000_000_123.25],
      ['n1@a', 4, 0],
    ]);
  });

  it('refuses bytes that are not an entry', () => {
    expect(() => decodeEntry(new Uint8Array([9, 0, 0]))).toThrow();
    expect(() => stampEntry(new Uint8Array([1, 2]), 1)).toThrow();
  });
});

describe('consumer keys', () => {
  it('qualify a link key with member and incarnation, and take it apart again', () => {
    const key = qualifyConsumer(processKey('n2', 'inc1'), 'container|with|bars/link');
    expect(processOf(key)).toBe('n2@inc1');
    expect(memberOf(key)).toBe('n2');
    expect(linkKeyOf(key)).toBe('container|with|bars/link');
    expect(memberOf('plain/link')).toBeUndefined();
  });
});

describe('member messages on the replication transport', () => {
  it('forward and status round-trip; Raft messages pass through the wrapped codec untouched', () => {
    const seen: unknown[] = [];
    const codec = withAppMessages(binaryWireCodec, (m) => seen.push(m));
    const fwd = { kind: 'forward' as const, from: 'n2', to: 'n1', request: new Uint8Array([1, 2, 3]) };
    const decoded = codec.decodeMessage(codec.encodeMessage(carry(fwd)));
    // decoding keeps the sender and addressee for the transport's check (the authenticated peer
    // must be the sender); only then does `consume` hand the message over
    expect(decoded.from).toBe('n2');
    expect(decoded.to).toBe('n1');
    expect(seen).toEqual([]);
    expect(codec.consume?.(decoded)).toBe(true);
    expect(seen).toEqual([fwd]);
    const status = {
      kind: 'status' as const,
      from: 'n1',
      to: 'n3',
      status: {
        host: '127.0.0.1',
        port: 5672,
        scheme: 'amqp' as const,
        serving: true,
        leaderId: 'n1',
        term: 3,
        commitIndex: 42,
        connections: 2,
        consumers: 5,
      },
    };
    expect(decodeApp(encodeApp(status))).toEqual(status);
    const hb = { type: 'heartbeat' as const, from: 'n1', to: 'n2', term: 4, commit: 9 };
    expect(codec.decodeMessage(codec.encodeMessage(hb))).toEqual(hb);
    expect(codec.consume?.(hb)).toBe(false); // Raft messages go to the replica
  });

  it('a member status with a term, commit index or client count outside the safe integers is refused', () => {
    const base = {
      host: 'h',
      port: 1,
      scheme: 'amqp' as const,
      serving: true,
      leaderId: null,
      term: 3,
      commitIndex: 4,
    };
    for (const bad of [
      { term: 2 ** 53 },
      { commitIndex: 2 ** 53 + 2 },
      { term: -1 },
      { connections: -1 },
      { consumers: 1.5 },
      { consumers: 2 ** 53 },
    ]) {
      const m = { kind: 'status' as const, from: 'n1', to: 'n2', status: { ...base, ...bad } };
      expect(() => decodeApp(encodeApp(m))).toThrow(UnsafeNumberError);
    }
  });
});
