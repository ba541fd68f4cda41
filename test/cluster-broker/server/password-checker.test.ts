/**
 * The password checks as an attacker sees them (docs/security.md#authentication): a wrong guess
 * for a user who has logged in before costs a full scrypt check like a cold one (only successes
 * are remembered), and the checks that wait for their turn are bounded and dropped when their
 * client has gone.
 */
import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { hashPassword } from '../../../src/broker.js';
import { parseHash } from '../../../src/cluster-broker/server/password-hash.js';
import { PasswordChecker, type PasswordVerdict } from '../../../src/cluster-broker/server/users.js';

async function users(): Promise<Map<string, ReturnType<typeof parseHash>>> {
  return new Map([
    ['alice', parseHash(await hashPassword('s3cret'))],
    ['bob', parseHash(await hashPassword('other'))],
  ]);
}

async function timed(f: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await f();
  return performance.now() - t0;
}

describe('wrong passwords', () => {
  it('a wrong guess after a remembered success needs a check slot, like a cold check', async () => {
    // one check at a time and none may wait: a guess that needs scrypt is refused as busy while
    // bob's cold check runs; a guess answered from memory would not be
    const checker = new PasswordChecker(await users(), { running: 1, maxWaiting: 0 });
    expect(await checker.verify('alice', 's3cret')).toBe('ok');
    const bobs = checker.verify('bob', 'other');
    expect(await checker.verify('alice', 'guess-1')).toBe('busy');
    // the remembered success itself stays cheap: no slot needed
    expect(await checker.verify('alice', 's3cret')).toBe('ok');
    expect(await bobs).toBe('ok');
    expect(await checker.verify('alice', 'guess-2')).toBe('wrong');
  });

  it('costs at least a good part of what a cold check costs (measured side by side)', async () => {
    const checker = new PasswordChecker(await users());
    const cold: number[] = [];
    for (const pw of ['x1', 'x2', 'x3']) cold.push(await timed(() => checker.verify('nobody', pw)));
    expect(await checker.verify('alice', 's3cret')).toBe('ok');
    const warmWrong: number[] = [];
    for (const pw of ['y1', 'y2', 'y3']) warmWrong.push(await timed(() => checker.verify('alice', pw)));
    // a remembered-only answer is ~1000x cheaper than scrypt; a quarter leaves room for a busy machine
    expect(Math.min(...warmWrong)).toBeGreaterThan(Math.min(...cold) / 4);
  });
});

describe('the check queue', () => {
  it('drops checks whose client left while they waited; a good login then runs at once', async () => {
    const checker = new PasswordChecker(await users(), {
      running: 2,
      maxWaiting: 1000,
      maxWaitingPerAddress: 1000,
    });
    const flood: Promise<PasswordVerdict>[] = [];
    for (let i = 0; i < 200; i++) {
      const client = new AbortController();
      flood.push(checker.verify(`nobody-${i}`, 'x', { address: `10.0.0.${i % 250}`, gone: client.signal }));
      client.abort(); // the flooder hangs up at once
    }
    const verdicts = await Promise.all(flood);
    // the two that found a free slot ran; every waiting one was dropped unchecked
    expect(verdicts.filter((v) => v === 'gone')).toHaveLength(198);
    expect(await checker.verify('alice', 's3cret', { address: '10.1.0.1' })).toBe('ok');
  });

  it('is bounded overall and per source address: beyond the bound a check is refused as busy at once', async () => {
    const checker = new PasswordChecker(await users(), {
      running: 1,
      maxWaiting: 4,
      maxWaitingPerAddress: 2,
    });
    const first = checker.verify('nobody', 'x', { address: 'a' }); // runs
    const waiting = [
      checker.verify('nobody', 'x', { address: 'a' }),
      checker.verify('nobody', 'x', { address: 'a' }),
    ];
    expect(await checker.verify('nobody', 'x', { address: 'a' })).toBe('busy');
    waiting.push(
      checker.verify('nobody', 'x', { address: 'b' }),
      checker.verify('nobody', 'x', { address: 'c' }),
    );
    expect(await checker.verify('alice', 's3cret', { address: 'd' })).toBe('busy');
    expect(await Promise.all([first, ...waiting])).toEqual(['wrong', 'wrong', 'wrong', 'wrong', 'wrong']);
    expect(await checker.verify('alice', 's3cret', { address: 'd' })).toBe('ok');
  });
});
