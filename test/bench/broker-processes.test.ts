import { describe, expect, it } from 'vitest';
import { quorumQueueProcesses } from '../../bench/lib/broker-processes.js';

describe('quorumQueueProcesses', () => {
  const nodes = [
    { name: 'rabbit1', pid: 101 },
    { name: 'rabbit2', pid: 102 },
    { name: 'rabbit3', pid: 103 },
  ];

  it("labels each node's beam.smp by its role for the queue, the leader first", () => {
    expect(quorumQueueProcesses(nodes, 'rabbit2')).toEqual([
      { label: 'leader rabbit2', pid: 102 },
      { label: 'follower rabbit1', pid: 101 },
      { label: 'follower rabbit3', pid: 103 },
    ]);
  });

  it('names no leader when the queue is led by a node it was not given', () => {
    expect(quorumQueueProcesses(nodes, 'rabbit9').map((p) => p.label)).toEqual([
      'follower rabbit1',
      'follower rabbit2',
      'follower rabbit3',
    ]);
  });
});
