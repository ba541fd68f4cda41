/**
 * The cluster bench's leader failover (bench/cluster.ts): kill -9 of the leader, then writes
 * through the surviving members until one is accepted; the time that took, per trial.
 */
import { type BenchCluster, waitLeader } from './cluster-processes.js';
import { close, connect, sendOnce } from './cluster-rhea-client.js';

/** One write through `port` on a fresh connection; resolves true when accepted. */
async function tryWrite(port: number, tag: string): Promise<boolean> {
  try {
    const c = await connect(port);
    try {
      return await Promise.race([
        sendOnce(c, 'bench-failover', 1, Buffer.from('x'), tag, new Set()),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 3000)),
      ]);
    } finally {
      void close(c);
    }
  } catch {
    return false;
  }
}

export async function failovers(
  c: BenchCluster,
  trials: number,
  log: (line: string) => void,
): Promise<number[]> {
  const out: number[] = [];
  for (let t = 0; t < trials; t++) {
    const leader = await waitLeader(c);
    const ports = c.ids.filter((x) => x !== leader).map((id) => c.amqp.get(id)!);
    const t0 = performance.now();
    await c.kill(leader);
    // a client that writes through the surviving members until a write is accepted
    let i = 0;
    while (!(await tryWrite(ports[i++ % ports.length]!, `fo-${t}-${i}`))) {
      if (performance.now() - t0 > 60_000) throw new Error('no new leader within 60 s');
    }
    const ms = performance.now() - t0;
    out.push(ms);
    log(`  failover ${t + 1}: ${Math.round(ms)} ms (killed leader ${leader})`);
    await c.spawn(leader);
    await waitLeader(c);
  }
  return out;
}
