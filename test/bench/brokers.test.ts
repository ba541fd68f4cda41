import { describe, expect, it } from 'vitest';
import { singleNodeNodeArgs } from '../../bench/lib/brokers.js';
import { memberV8Flags } from '../../src/cluster-broker/supervisor/member-v8-flags.js';

describe('singleNodeNodeArgs', () => {
  it("starts the single node with a member's V8 flags for one broker on this host, so the bench compares them alike", () => {
    expect(singleNodeNodeArgs([])).toEqual([...memberV8Flags(1)]);
  });

  it("puts the caller's Node flags after them, so a flag given for this run wins", () => {
    expect(singleNodeNodeArgs(['--initial-old-space-size=64', '--cpu-prof'])).toEqual([
      ...memberV8Flags(1),
      '--initial-old-space-size=64',
      '--cpu-prof',
    ]);
  });
});
