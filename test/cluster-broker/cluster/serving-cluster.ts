/**
 * The cluster of a test file that shares one for all its tests (vitest hooks: test files only,
 * unlike cluster-support.ts, which the benchmarks use too).
 */
import { afterAll, beforeAll } from 'vitest';
import type { ClusterHandle, StartClusterOptions } from '../../../src/broker.js';
import type { Connection } from '../../../src/index.js';
import { startTestCluster, waitServing } from './cluster-support.js';

/** A test file's cluster: serving before its tests, stopped after them (see useServingCluster). */
export interface ServingCluster {
  /** The cluster (set before the file's first test). */
  readonly handle: ClusterHandle;
  /** Closes `conn` after the file's tests, before the cluster stops. */
  track(conn: Connection): Connection;
}

/**
 * One 3-member test cluster for the whole calling test file: started and serving in its
 * beforeAll; the connections handed to `track` closed and the cluster stopped in its afterAll.
 */
export function useServingCluster(options: StartClusterOptions = {}): ServingCluster {
  let handle: ClusterHandle | undefined;
  const conns: Connection[] = [];
  beforeAll(async () => {
    handle = await startTestCluster(options);
    await waitServing(handle);
  });
  afterAll(async () => {
    for (const c of conns) await c.close({ timeoutMs: 2_000 }).catch(() => undefined);
    await handle?.stop();
  });
  return {
    get handle(): ClusterHandle {
      if (!handle) throw new Error('the test cluster is not started yet');
      return handle;
    },
    track(conn: Connection): Connection {
      conns.push(conn);
      return conn;
    },
  };
}
