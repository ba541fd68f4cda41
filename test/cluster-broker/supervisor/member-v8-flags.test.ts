import { describe, expect, it } from 'vitest';
import {
  MEMBER_V8_FLAGS,
  memberV8Flags,
  SINGLE_THREADED_GC,
  withMemberV8Flags,
} from '../../../src/cluster-broker/supervisor/member-v8-flags.js';

describe("a member's V8 flags", () => {
  it('run the collector on the main thread alone once the members fill the cores', () => {
    expect(memberV8Flags(3, 2)).toEqual([...MEMBER_V8_FLAGS, SINGLE_THREADED_GC]);
    expect(memberV8Flags(3, 3)).toEqual([...MEMBER_V8_FLAGS, SINGLE_THREADED_GC]);
    expect(memberV8Flags(1, 1)).toEqual([...MEMBER_V8_FLAGS, SINGLE_THREADED_GC]);
  });

  it("keep V8's collector threads while cores are left over for them", () => {
    expect(memberV8Flags(3, 4)).toEqual(MEMBER_V8_FLAGS);
    expect(memberV8Flags(1, 2)).toEqual(MEMBER_V8_FLAGS);
    expect(memberV8Flags(3, 16)).not.toContain(SINGLE_THREADED_GC);
  });

  it("go before the command's own arguments of a member run by this Node, so an operator's flag wins", () => {
    const command = { command: process.execPath, args: ['--no-single-threaded-gc', 'member.js'] };
    expect(withMemberV8Flags(command, 3).args).toEqual([
      ...memberV8Flags(3),
      '--no-single-threaded-gc',
      'member.js',
    ]);
  });

  it('leave a command that does not run this Node as given', () => {
    const command = { command: '/usr/bin/env', args: ['true'] };
    expect(withMemberV8Flags(command, 3)).toBe(command);
  });
});
