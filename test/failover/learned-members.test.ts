/**
 * A server's member list as an attacker writes it (docs/security.md#client-credentials-and-learned-members):
 * a member over amqp:// learned from an amqps:// one is never taken (so the pool never hands it
 * out, and no credentials go there), nor a redirect to one; a list of thousands is cut at the cap.
 */
import { describe, expect, it } from 'vitest';
import {
  type IgnoredMembers,
  MAX_LEARNED_MEMBERS,
  mayFollowScheme,
  ServerPool,
  strongestScheme,
} from '../../src/failover/index.js';

const member = (host: string, port: number, scheme?: string) => ({
  'network-host': host,
  port,
  ...(scheme === undefined ? {} : { scheme }),
});

function poolWithLog(urls: string[], policy: 'replace' | 'add' = 'replace') {
  const ignored: IgnoredMembers[] = [];
  const pool = new ServerPool(urls, {
    randomize: false,
    serverListAction: policy,
    onIgnored: (i) => ignored.push(i),
  });
  return { pool, ignored };
}

/** Every server next() hands out over two full turns (what the client would dial). */
function dialled(pool: ServerPool): string[] {
  const out = new Set<string>();
  for (let i = 0; i < pool.size * 2 + 2; i++) {
    const { server } = pool.next(0);
    out.add(`${server.scheme}://${server.host}:${server.port}`);
  }
  return [...out];
}

describe('learned members never lower the scheme', () => {
  it('the policy: same class or stronger only', () => {
    expect(mayFollowScheme('amqps', 'amqp')).toBe(false);
    expect(mayFollowScheme('amqps', 'amqps')).toBe(true);
    expect(mayFollowScheme('amqp', 'amqp')).toBe(true);
    expect(mayFollowScheme('amqp', 'amqps')).toBe(true);
    expect(strongestScheme(['amqp', 'amqps', 'amqp'])).toBe('amqps');
  });

  it('ignores an amqp:// member listed by an amqps:// server, keeps its amqps:// members', () => {
    const { pool, ignored } = poolWithLog(['amqps://user:secret@seed:5671']);
    const change = pool.applyMemberList(
      [
        member('seed', 5671, 'amqps'),
        member('plain', 5672, 'amqp'),
        member('safe', 5671),
        member('both', 5671, 'amqps'),
        member('both', 5672, 'amqp'),
      ],
      'seed:5671',
    );
    expect(change.added.map((s) => s.key).sort()).toEqual(['both:5671', 'safe:5671']);
    expect(pool.get('plain:5672')).toBeUndefined();
    expect(dialled(pool).every((u) => u.startsWith('amqps://'))).toBe(true);
    // the credentials went only to amqps members
    for (const s of pool.servers()) if (s.password !== undefined) expect(s.scheme).toBe('amqps');
    expect(ignored).toEqual([
      {
        reason: 'weaker-scheme',
        count: 2,
        examples: ['amqp://user@plain:5672', 'amqp://user@both:5672'],
        via: 'amqps://user@seed:5671',
      },
    ]);
  });

  it('holds a list from an unknown endpoint to the strongest configured scheme', () => {
    const { pool, ignored } = poolWithLog(['amqps://seed']);
    pool.applyMemberList([member('plain', 5672, 'amqp'), member('bare', 5671)]);
    expect(pool.get('plain:5672')).toBeUndefined();
    expect(pool.get('bare:5671')?.scheme).toBe('amqps');
    expect(ignored.map((i) => i.reason)).toEqual(['weaker-scheme']);
  });

  it('refuses a redirect from an amqps:// member to amqp://', () => {
    const { pool, ignored } = poolWithLog(['amqps://user:secret@seed']);
    expect(pool.redirect(member('plain', 5672, 'amqp'), 'seed:5671')).toBeUndefined();
    expect(pool.get('plain:5672')).toBeUndefined();
    expect(pool.next(0).server.key).toBe('seed:5671');
    expect(ignored[0]?.reason).toBe('weaker-scheme');
    expect(pool.redirect(member('other', 5671, 'amqps'), 'seed:5671')?.key).toBe('other:5671');
  });
});

describe('the learned list is capped', () => {
  it(`keeps at most ${MAX_LEARNED_MEMBERS} of a 9,000-entry list`, () => {
    const { pool, ignored } = poolWithLog(['amqp://seed']);
    const list = Array.from({ length: 9000 }, (_, i) => member(`m${i}`, 5672));
    const change = pool.applyMemberList(list, 'seed:5672');
    expect(change.added).toHaveLength(MAX_LEARNED_MEMBERS);
    expect(pool.size).toBe(MAX_LEARNED_MEMBERS + 1);
    expect(pool.get(`m${MAX_LEARNED_MEMBERS - 1}:5672`)).toBeDefined();
    expect(pool.get(`m${MAX_LEARNED_MEMBERS}:5672`)).toBeUndefined();
    expect(ignored).toEqual([
      {
        reason: 'over-cap',
        count: 9000 - MAX_LEARNED_MEMBERS,
        examples: [
          `amqp://m${MAX_LEARNED_MEMBERS}:5672`,
          `amqp://m${MAX_LEARNED_MEMBERS + 1}:5672`,
          `amqp://m${MAX_LEARNED_MEMBERS + 2}:5672`,
        ],
        via: 'amqp://seed:5672',
      },
    ]);
  });

  it("does not grow past the cap over many 'add' updates and redirects", () => {
    const { pool, ignored } = poolWithLog(['amqp://seed'], 'add');
    for (let round = 0; round < 50; round++) {
      pool.applyMemberList(
        Array.from({ length: 10 }, (_, i) => member(`r${round}-${i}`, 5672)),
        'seed:5672',
      );
    }
    expect(pool.size).toBe(MAX_LEARNED_MEMBERS + 1);
    expect(pool.redirect(member('one-more', 5672), 'seed:5672')).toBeUndefined();
    expect(pool.size).toBe(MAX_LEARNED_MEMBERS + 1);
    expect(ignored.every((i) => i.reason === 'over-cap')).toBe(true);
  });

  it('takes a smaller cap, and refuses a bad one', () => {
    const pool = new ServerPool(['amqp://seed'], { maxLearnedMembers: 2, randomize: false });
    pool.applyMemberList([member('a', 1), member('b', 2), member('c', 3)], 'seed:5672');
    expect(pool.servers().map((s) => s.key)).toEqual(['seed:5672', 'a:1', 'b:2']);
    expect(() => new ServerPool(['amqp://seed'], { maxLearnedMembers: -1 })).toThrow(/maxLearnedMembers/);
  });
});
