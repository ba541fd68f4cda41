import { describe, expect, it } from 'vitest';
import { followerOverLeaderCpu } from '../../bench/lib/e2e-figures.js';

describe('followerOverLeaderCpu', () => {
  it('divides the costlier follower by the leader, medians over the rounds', () => {
    expect(
      followerOverLeaderCpu({
        client: [5, 5],
        'leader n2': [20, 40],
        'follower n1': [8, 10],
        'follower n3': [9, 12],
      }),
    ).toBe(0.45);
  });

  it('counts every round of the leader whichever member led', () => {
    expect(
      followerOverLeaderCpu({ 'leader n1': [30], 'leader n2': [10, 20], 'follower n3': [5, 5, 5] }),
    ).toBe(0.25);
  });

  it('is 0 without a follower', () => {
    expect(followerOverLeaderCpu({ client: [1], 'leader n1': [10] })).toBe(0);
  });
});
