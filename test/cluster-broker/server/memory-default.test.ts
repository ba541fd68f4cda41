/**
 * The memory alarm's default limit sits below the heap the process can actually use
 * (docs/production.md#limits-by-default): in a process whose heap V8 limits to 256 MiB, on a
 * machine where 40% of memory is far more, the default is 70% of the heap limit, so the alarm
 * fires before the process would die of "JavaScript heap out of memory".
 */
import { spawnSync } from 'node:child_process';
import { expect, it } from 'vitest';

const ROOT = new URL('../../..', import.meta.url).pathname;

it('defaults maxMemory to at most 70% of the V8 heap limit', () => {
  const script = `
    import { defaultMaxMemory, heapSizeLimit, systemMemory } from './src/cluster-broker/server/resource-alarm.ts';
    console.log(JSON.stringify({ max: defaultMaxMemory(), heap: heapSizeLimit(), system: systemMemory() }));
  `;
  const run = spawnSync(
    process.execPath,
    ['--max-old-space-size=256', '--import', 'tsx', '--input-type=module', '-e', script],
    { cwd: ROOT, encoding: 'utf8', timeout: 60_000 },
  );
  expect(run.status, run.stderr).toBe(0);
  const { max, heap, system } = JSON.parse(run.stdout.trim()) as {
    max: number;
    heap: number;
    system: number;
  };
  expect(heap).toBeLessThan(400 * 1024 * 1024);
  expect(system * 0.4).toBeGreaterThan(heap);
  expect(max).toBe(Math.floor(heap * 0.7));
});
