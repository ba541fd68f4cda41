import { describe, expect, it } from 'vitest';
import { defaultWarm, parseWarm, warmUpPasses } from '../../bench/lib/warm-option.js';

describe('the benches\u2019 --warm option', () => {
  it('takes a positive whole number and refuses anything else', () => {
    expect(parseWarm(undefined)).toBeUndefined();
    expect(parseWarm('20000')).toBe(20_000);
    for (const bad of ['0', '-5', '1.5', 'many', ''])
      expect(() => parseWarm(bad)).toThrow(/--warm takes a positive whole number/);
  });

  it('defaults to a tenth of a round, at least 100', () => {
    expect(defaultWarm(20_000)).toBe(2_000);
    expect(defaultWarm(500)).toBe(100);
    expect(defaultWarm(1_005)).toBe(100);
  });
});

describe('warmUpPasses', () => {
  it('runs the rounds in their order, twice by default, so each has run after all the others', async () => {
    const ran: string[] = [];
    await warmUpPasses(['topic', 'queues', 'sends'], async (round, pass) => {
      ran.push(`${round}${pass}`);
    });
    expect(ran).toEqual(['topic1', 'queues1', 'sends1', 'topic2', 'queues2', 'sends2']);
  });
});
