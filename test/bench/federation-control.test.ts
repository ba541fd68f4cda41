import { describe, expect, it } from 'vitest';
import {
  clusterCpuUs,
  controlFigures,
  formatControlFigures,
  medianControlRatios,
} from '../../bench/lib/federation-control.js';

const local = {
  client: 9,
  'east leader n2': 1,
  'east follower n1': 1,
  'east follower n3': 0,
  'west leader n2': 21,
  'west follower n1': 13,
  'west follower n3': 11,
};
const federated = {
  client: 11,
  'east leader n2': 23,
  'east follower n1': 20,
  'east follower n3': 15,
  'west leader n2': 37,
  'west follower n1': 19,
  'west follower n3': 18,
};
const control = {
  client: 20,
  'east leader n2': 30,
  'east follower n1': 15,
  'east follower n3': 15,
  'west leader n2': 30,
  'west follower n1': 15,
  'west follower n3': 15,
};

describe('clusterCpuUs', () => {
  it("sums one cluster's members, not the client nor the other cluster", () => {
    expect(clusterCpuUs(local, 'west')).toBe(45);
    expect(clusterCpuUs(local, 'east')).toBe(2);
  });

  it('is null when a member was not read, or the cluster has none', () => {
    expect(clusterCpuUs({ ...local, 'west follower n3': null }, 'west')).toBeNull();
    expect(clusterCpuUs({ client: 3 }, 'west')).toBeNull();
  });
});

describe('controlFigures', () => {
  it('sets the control round against the local and federated rounds', () => {
    const f = controlFigures({ local, federated, control });
    expect(f.west).toEqual({ local: 45, control: 60, federated: 74 });
    expect(f.east).toEqual({ control: 60, federated: 58 });
    expect(f.westControlOverLocal).toBe(1.33);
    expect(f.westFederatedOverControl).toBe(1.23);
    // (60 + 60) / 45
    expect(f.sideBySideRatio).toBe(2.67);
    // (58 + 74) / 120
    expect(f.federatedOverSideBySide).toBe(1.1);
  });

  it('gives null ratios, not zeros, when a round could not be read', () => {
    const f = controlFigures({ local, federated, control: {} });
    expect(f.west.control).toBeNull();
    expect(f.westControlOverLocal).toBeNull();
    expect(f.sideBySideRatio).toBeNull();
    expect(f.federatedOverSideBySide).toBeNull();
    expect(f.westFederatedOverControl).toBeNull();
  });

  it('prints every figure, a dash for the unread ones', () => {
    const lines = formatControlFigures(controlFigures({ local, federated, control }));
    expect(lines.join('\n')).toContain('control / local 1.33, federated / control 1.23');
    expect(lines.join('\n')).toContain('two local sends side by side / one alone: 2.67');
    expect(formatControlFigures(controlFigures({ local, federated, control: {} })).join('\n')).toContain(
      'control -',
    );
  });
});

describe('medianControlRatios', () => {
  it('takes the median of each ratio over the repeats that have one', () => {
    const a = controlFigures({ local, federated, control });
    const b = controlFigures({ local, federated, control: { ...control, 'west leader n2': 45 } });
    const c = controlFigures({ local, federated, control: {} });
    const m = medianControlRatios([a, b, c]);
    // west control 60 and 75 over 45: 1.33 and 1.67, median of two is their mean
    expect(m.westControlOverLocal).toBe(1.5);
    expect(medianControlRatios([c]).sideBySideRatio).toBeNull();
  });
});
