import { describe, expect, it } from 'vitest';
import { singleNodeNodeArgs } from '../../bench/lib/brokers.js';
import { MEMBER_V8_FLAGS } from '../../src/cluster-broker/supervisor/member-v8-flags.js';

describe('singleNodeNodeArgs', () => {
  it("starts the single node with the cluster members' V8 flags, so the bench compares them alike", () => {
    expect(singleNodeNodeArgs([])).toEqual([...MEMBER_V8_FLAGS]);
  });

  it("puts the caller's Node flags after them, so a flag given for this run wins", () => {
    expect(singleNodeNodeArgs(['--initial-old-space-size=64', '--cpu-prof'])).toEqual([
      ...MEMBER_V8_FLAGS,
      '--initial-old-space-size=64',
      '--cpu-prof',
    ]);
  });
});
