import { describe, expect, it } from 'vitest';
import { collectGarbage } from '../../bench/lib/full-gc.js';

describe('collectGarbage (bench/lib/full-gc.ts)', () => {
  it('collects an object nothing refers to, without node being started with --expose-gc', async () => {
    let target: object | undefined = { payload: new Array(1000).fill(1) };
    const ref = new WeakRef(target);
    target = undefined;
    // a WeakRef's target is kept until the job that made it ends
    await new Promise((resolve) => setImmediate(resolve));
    collectGarbage();
    expect(ref.deref()).toBeUndefined();
  });
});
