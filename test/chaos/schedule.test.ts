import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../src/common/random.js';
import { DEFAULT_FAULTS } from './run-types.js';
import { parseFaults, randomFault, randomSchedule } from './schedule.js';

const ids5 = ['n1', 'n2', 'n3', 'n4', 'n5'];

describe('nemesis schedules', () => {
  it('are a function of the seed', () => {
    const o = {
      faults: parseFaults('kill,pause,partition,restart-all,slow'),
      ids: ids5,
      durationMs: 600_000,
    };
    expect(randomSchedule({ ...o, seed: 7 })).toEqual(randomSchedule({ ...o, seed: 7 }));
    expect(randomSchedule({ ...o, seed: 7 })).not.toEqual(randomSchedule({ ...o, seed: 8 }));
  });

  it('fit the duration and use only the asked fault families', () => {
    const steps = randomSchedule({ seed: 3, faults: ['kill', 'partition'], ids: ids5, durationMs: 120_000 });
    expect(steps.length).toBeGreaterThan(3);
    expect(steps.every((s) => ['kill', 'partition', 'ring'].includes(s.fault.kind))).toBe(true);
    expect(steps.reduce((t, s) => t + s.holdMs + s.gapMs, 0)).toBeLessThanOrEqual(120_000);
  });

  it('never take down or cut off more than a minority', () => {
    const random = seededRandom(1);
    for (let i = 0; i < 500; i++) {
      for (const ids of [ids5, ids5.slice(0, 3)]) {
        const minority = Math.floor((ids.length - 1) / 2);
        const f = randomFault((['kill', 'pause', 'partition'] as const)[i % 3]!, ids, random);
        if ((f.kind === 'kill' || f.kind === 'pause') && f.victims !== 'client')
          expect(f.victims.length).toBeLessThanOrEqual(minority);
        if (f.kind === 'partition')
          expect(Math.min(...f.groups.map((g) => g.length))).toBeLessThanOrEqual(minority);
        if (f.kind === 'ring') expect(ids.length).toBeGreaterThanOrEqual(5);
      }
    }
  });

  it("corrupt damages one member's store at a time, and is in the default fault list", () => {
    const random = seededRandom(5);
    const files = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const f = randomFault('corrupt', ids5, random);
      if (f.kind !== 'corrupt') throw new Error(`got ${f.kind}`);
      if (f.victims !== 'client') expect(f.victims.length).toBe(1);
      expect(f.at).toBeGreaterThanOrEqual(0);
      expect(f.at).toBeLessThanOrEqual(1);
      files.add(f.file);
    }
    expect([...files].sort()).toEqual(['log', 'meta.json', 'snapshot']);
    expect(DEFAULT_FAULTS).toContain('corrupt');
  });

  it('reject unknown fault names', () => {
    expect(() => parseFaults('kill,explode')).toThrow(/unknown fault 'explode'/);
  });
});
