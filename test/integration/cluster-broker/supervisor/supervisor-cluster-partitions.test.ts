import { describe, expect, it } from 'vitest';
import { waitFor } from '../../../support/net.js';
import { cluster, expectReachability, useCleanups } from './stand-in-cluster.js';

useCleanups();

describe('startCluster with stand-in members', () => {
  it('partitions: one member alone, then heal', async () => {
    const handle = await cluster({ nodes: 3 });
    await expectReachability(handle, () => true, 'full mesh');
    handle.partition([['n1'], ['n2', 'n3']]);
    await expectReachability(
      handle,
      (from, to) => from !== 'n1' && to !== 'n1',
      'n1 cut off, n2 <-> n3 still talking',
    );
    handle.heal();
    await expectReachability(handle, () => true, 'healed mesh');
  });

  it('partitions 5 members: minority/majority, then a ring', async () => {
    const handle = await cluster({ nodes: 5 });
    await expectReachability(handle, () => true, 'full mesh');
    const minority = new Set(['n1', 'n2']);
    handle.partition([
      ['n1', 'n2'],
      ['n3', 'n4', 'n5'],
    ]);
    await expectReachability(
      handle,
      (from, to) => minority.has(from) === minority.has(to),
      'minority/majority',
    );
    handle.ring();
    const neighbours = (from: string, to: string): boolean => {
      const d = Math.abs(Number(from.slice(1)) - Number(to.slice(1)));
      return d === 1 || d === 4;
    };
    await expectReachability(handle, neighbours, 'ring');
    handle.heal();
    await expectReachability(handle, () => true, 'healed mesh');
  });

  it('lossy links reset member connections (seeded); the members recover once it stops', async () => {
    const handle = await cluster({ nodes: 3, seed: 7 });
    await expectReachability(handle, () => true, 'full mesh');
    handle.lossy(0.2);
    const resets = (): number => handle.mesh.stats().reduce((sum, link) => sum + link.connectionsReset, 0);
    await waitFor(() => resets() >= 10, { timeoutMs: 20_000, what: 'connections reset by lossy links' });
    handle.lossy(0);
    const after = resets();
    await expectReachability(handle, () => true, 'full mesh after lossy');
    expect(resets()).toBe(after);
  });

  it('slow links delay member traffic without breaking it', async () => {
    const handle = await cluster({ nodes: 3 });
    handle.slow(100);
    await waitFor(() => handle.mesh.stats().some((link) => link.bytesHeld > 0), {
      timeoutMs: 20_000,
      what: 'bytes held back by slow links',
      intervalMs: 5,
    });
    await expectReachability(handle, () => true, 'full mesh over slow links');
    handle.slow(0);
  });

  it("cutMode 'blackhole' partitions silently and heals", async () => {
    const handle = await cluster({ nodes: 3, cutMode: 'blackhole' });
    await expectReachability(handle, () => true, 'full mesh');
    handle.partition([['n3'], ['n1', 'n2']]);
    await expectReachability(handle, (from, to) => from !== 'n3' && to !== 'n3', 'n3 black-holed');
    // Nothing was reset: the stalled connections are still there, just silent.
    const cutLinks = handle.mesh.stats().filter((link) => link.cut);
    expect(cutLinks).toHaveLength(4);
    expect(cutLinks.every((link) => link.activeConnections >= 1 && link.connectionsReset === 0)).toBe(true);
    handle.heal();
    await expectReachability(handle, () => true, 'healed mesh');
  });
});
