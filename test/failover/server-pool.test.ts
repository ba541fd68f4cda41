import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../src/common/random.js';
import { ServerPool } from '../../src/failover/server-pool.js';

const urls = ['amqp://u:p@a:1', 'amqp://u:p@b:2', 'amqp://u:p@c:3'];
const member = (host: string, port: number, extra: Record<string, unknown> = {}) => ({
  'network-host': host,
  port,
  ...extra,
});

describe('ServerPool', () => {
  it('keeps configured order when randomize is off and round-robins', () => {
    const pool = new ServerPool(urls, { randomize: false });
    const keys = [0, 1, 2, 3, 4].map(() => pool.next(0).server.key);
    expect(keys).toEqual(['a:1', 'b:2', 'c:3', 'a:1', 'b:2']);
    expect(pool.stats('a:1')?.attempts).toBe(2);
  });

  it('shuffles deterministically with a seeded random', () => {
    const order = (seed: number) =>
      new ServerPool(urls, { random: seededRandom(seed) }).servers().map((s) => s.key);
    expect(order(7)).toEqual(order(7));
    const seen = new Set([1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((s) => order(s).join(',')));
    expect(seen.size).toBeGreaterThan(1);
  });

  it('drops duplicate configured URLs and refuses an empty list', () => {
    expect(new ServerPool(['amqp://a:1', 'amqp://A:1']).size).toBe(1);
    expect(() => new ServerPool([])).toThrow();
  });

  it('replace: the pool becomes the broker list plus the connected server; credentials inherited', () => {
    const pool = new ServerPool<{ tls: string }>(
      [{ url: 'amqps://user:pw@a:1', options: { tls: 'T' } }, 'amqp://b:2', 'amqp://c:3'],
      { randomize: false },
    );
    pool.connected('a:1');
    const change = pool.applyOpenProperties({
      'failover-server-list': [member('b', 2, { 'quorate:leader': true }), member('d', 4)],
    });
    expect(change.added.map((s) => s.key)).toEqual(['d:4']);
    expect(change.removed.map((s) => s.key)).toEqual(['c:3']);
    expect(
      pool
        .servers()
        .map((s) => s.key)
        .sort(),
    ).toEqual(['a:1', 'b:2', 'd:4']);
    const d = pool.get('d:4')!;
    expect(d).toMatchObject({ scheme: 'amqps', username: 'user', password: 'pw', options: { tls: 'T' } });
    expect(d.source).toBe('learned');
    // b was configured without credentials: it keeps its own, but gets broker state
    expect(pool.get('b:2')).toMatchObject({ leader: true, source: 'configured' });
    expect(pool.get('b:2')?.username).toBeUndefined();
  });

  it('absent key or empty list leaves the pool alone; add merges; ignore ignores', () => {
    const pool = new ServerPool(urls, { randomize: false });
    pool.connected('a:1');
    expect(pool.applyOpenProperties({})).toEqual({ added: [], removed: [] });
    expect(pool.applyOpenProperties(undefined)).toEqual({ added: [], removed: [] });
    expect(pool.applyMemberList([])).toEqual({ added: [], removed: [] });
    expect(pool.size).toBe(3);

    const adder = new ServerPool(urls, { randomize: false, serverListAction: 'add' });
    const ch = adder.applyMemberList([member('z', 9)], 'a:1');
    expect(ch.added.map((s) => s.key)).toEqual(['z:9']);
    expect(ch.removed).toEqual([]);
    expect(adder.size).toBe(4);

    const ignorer = new ServerPool(urls, { serverListAction: 'ignore' });
    expect(ignorer.applyMemberList([member('z', 9)])).toEqual({ added: [], removed: [] });
  });

  it('learned members default the port by scheme and use the via scheme when absent', () => {
    const pool = new ServerPool(['amqp://a'], { randomize: false });
    pool.applyMemberList([{ 'network-host': 'x' }, { 'network-host': 'y', scheme: 'amqps' }], 'a:5672');
    expect(pool.get('x:5672')?.scheme).toBe('amqp');
    expect(pool.get('y:5671')?.scheme).toBe('amqps');
  });

  it('not-quorate members are skipped until their backoff expires, and never dropped', () => {
    const pool = new ServerPool(urls, {
      randomize: false,
      random: () => 0,
      notQuorateBackoff: { initialMs: 1000, maxMs: 8000, factor: 2, jitter: 0 },
    });
    expect(pool.notQuorate('a:1', 0)).toBe(1000);
    const picks = [0, 1, 2, 3].map(() => pool.next(10).server.key);
    expect(picks).not.toContain('a:1');
    // after its backoff it takes its turn again like any member
    const later = [0, 1, 2, 3].map(() => pool.next(1000).server.key);
    expect(later).toContain('a:1');
    // everyone not quorate: the soonest to come back is returned with notBefore
    pool.notQuorate('b:2', 100); // until 1100
    pool.notQuorate('c:3', 50); // until 1050
    pool.notQuorate('a:1', 200); // second time: 2000 -> until 2200
    const n = pool.next(500);
    expect(n.server.key).toBe('c:3');
    expect(n.notBefore).toBe(1050);
    // expired ones are preferred over waiting
    expect(pool.next(1075).server.key).toBe('c:3');
    // connecting resets the backoff
    pool.connected('a:1');
    expect(pool.stats('a:1')).toMatchObject({ notQuorateCount: 0, consecutiveFailures: 0 });
    expect(pool.stats('a:1')?.notQuorateUntil).toBeUndefined();
  });

  it('a hung member stays held back when another member lists it as quorate (docs/failover.md#unresponsive)', () => {
    const pool = new ServerPool(['amqp://a:1', 'amqp://b:2', 'amqp://c:3'], {
      randomize: false,
      notQuorateBackoff: { initialMs: 300, maxMs: 8000, factor: 2, jitter: 0 },
    });
    // a (the leader) hangs: the client gives it up, held back for the idle timeout
    pool.unresponsive('a:1', 0, 10_000);
    // b still lists it as a quorate member (b has not noticed yet, and cannot know our path to a)
    pool.applyMembers([
      { host: 'a', port: 1, quorate: true },
      { host: 'b', port: 2, quorate: true },
      { host: 'c', port: 3, quorate: true },
    ]);
    // b and c close us while they elect a new leader: still they come before a
    pool.notQuorate('b:2', 10);
    pool.notQuorate('c:3', 10);
    const pick = pool.next(20);
    expect(pick.server.key).not.toBe('a:1');
    expect(pick.notBefore).toBe(310);
    // our own connection to a clears the hold
    pool.connected('a:1');
    expect(pool.stats('a:1')?.unresponsiveUntil).toBeUndefined();
  });

  it('when every member is held for unresponsiveness, the one suspected first is dialled at once', () => {
    const pool = new ServerPool(['amqp://a:1', 'amqp://b:2', 'amqp://c:3'], { randomize: false });
    // a and b hung earlier (and run again by now, unknown to us); c hangs now
    pool.unresponsive('a:1', 0, 10_000);
    pool.unresponsive('b:2', 3_000, 10_000);
    pool.unresponsive('c:3', 6_000, 10_000);
    expect(pool.next(6_000)).toMatchObject({ server: { key: 'a:1' }, notBefore: 6_000 });
  });

  it('a member that keeps failing does not starve members whose not-quorate backoff expired', () => {
    const pool = new ServerPool(['amqp://a:1', 'amqp://b:2', 'amqp://c:3'], {
      randomize: false,
      notQuorateBackoff: { initialMs: 1000, maxMs: 8000, factor: 2, jitter: 0 },
    });
    // the leader died (a refuses connections); b and c closed us while electing a new one
    pool.failed('a:1', new Error('refused'), 0);
    pool.notQuorate('b:2', 0);
    pool.notQuorate('c:3', 0);
    expect(pool.next(10).server.key).toBe('a:1');
    pool.failed('a:1', new Error('refused'), 10);
    // their backoff over, b and c take turns with a although a keeps failing
    const picks: string[] = [];
    for (let t = 1000; t < 1006; t++) {
      const key = pool.next(t).server.key;
      picks.push(key);
      if (key === 'a:1') pool.failed(key, new Error('refused'), t);
    }
    expect(new Set(picks)).toEqual(new Set(['a:1', 'b:2', 'c:3']));
  });

  it('members the broker reports as not quorate come after healthy ones', () => {
    const pool = new ServerPool(urls, { randomize: false });
    pool.connected('a:1');
    pool.applyMemberList([member('a', 1), member('b', 2, { 'quorate:quorate': false }), member('c', 3)]);
    pool.disconnected();
    const picks = [0, 1].map(() => pool.next(0).server.key);
    expect(picks).not.toContain('b:2');
  });

  it('counts failures per member', () => {
    const pool = new ServerPool(urls, { randomize: false });
    pool.failed('a:1', new Error('refused'), 5);
    pool.failed('a:1', 'timeout', 7);
    expect(pool.stats('a:1')).toMatchObject({
      consecutiveFailures: 2,
      lastFailureAt: 7,
      lastFailureReason: 'timeout',
    });
    pool.connected('a:1');
    expect(pool.current?.key).toBe('a:1');
    expect(pool.stats('a:1')?.consecutiveFailures).toBe(0);
    pool.failed('a:1', 'gone', 9);
    expect(pool.current).toBeUndefined();
  });

  it('redirect makes the target the next server', () => {
    const pool = new ServerPool(urls, { randomize: false });
    pool.connected('a:1');
    const target = pool.redirect({ 'network-host': 'r', port: 77 });
    expect(target?.key).toBe('r:77');
    expect(target?.username).toBe('u');
    expect(pool.next(0).server.key).toBe('r:77');
  });

  it('property: next() visits every non-backed-off member within one round, whatever the updates', () => {
    fc.assert(
      fc.property(
        fc.integer(),
        fc.array(fc.uniqueArray(fc.integer({ min: 1, max: 8 }), { minLength: 1, maxLength: 6 }), {
          maxLength: 5,
        }),
        (seed, updates) => {
          const pool = new ServerPool(['amqp://h:1', 'amqp://h:2'], { random: seededRandom(seed) });
          pool.connected('h:1');
          for (const ports of updates) {
            pool.applyMemberList(ports.map((p) => member('h', p)));
            const n = pool.size;
            const seen = new Set<string>();
            for (let i = 0; i < n; i++) seen.add(pool.next(0).server.key);
            expect(seen.size).toBe(n);
            // the pool is exactly the broker's list plus the connected server
            const expected = new Set([...ports.map((p) => `h:${p}`), 'h:1']);
            expect(new Set(pool.servers().map((s) => s.key))).toEqual(expected);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
