/**
 * The needless-failover count of the failover bench (`--healthy SECONDS`): a 3-member reference
 * cluster where nothing is stopped or killed, one client with default options producing with
 * `window` sends in flight and consuming the same queue, for `seconds`. Every `failover` the
 * client reports is needless here; the ones with `reason: 'unresponsive'` are the silence watch's
 * (docs/failover.md#unresponsive), goal 0. The longest wait for an outcome is printed beside, as
 * a measure of how much the members paused (fsyncs, GC, a busy machine) during the run.
 */
import type { ClusterHandle } from '../../src/broker.js';
import { connect, type Delivery } from '../../src/index.js';

export interface HealthyFailoverResult {
  seconds: number;
  accepted: number;
  received: number;
  /** every failover of the client (all needless: no member was stopped) */
  failovers: number;
  /** of those, the ones the silence watch caused */
  unresponsiveFailovers: number;
  /** the longest a send waited for its outcome, ms */
  slowestSendMs: number;
}

export async function healthyRun(
  cluster: ClusterHandle,
  seconds: number,
  window: number,
  log: (line: string) => void,
): Promise<HealthyFailoverResult> {
  const queue = 'bench-failover-healthy';
  const conn = await connect({ urls: cluster.urls, containerId: 'bench-failover-healthy' });
  let failovers = 0;
  let unresponsiveFailovers = 0;
  conn.on('failover', (f) => {
    failovers++;
    if (f.reason === 'unresponsive') unresponsiveFailovers++;
    log(
      `  needless failover ${portOf(f.from)} -> ${portOf(f.to)}: ${f.reason ?? '?'} (${Math.round(f.durationMs)} ms)`,
    );
  });
  const sender = await conn.openSender(queue);
  const receiver = await conn.openReceiver(queue, { credit: window });
  let accepted = 0;
  let received = 0;
  let slowestSendMs = 0;
  const deadline = performance.now() + seconds * 1_000;
  const consuming = (async () => {
    try {
      for await (const d of receiver as AsyncIterable<Delivery>) {
        received++;
        d.accept().catch(() => undefined);
      }
    } catch {
      // closed at the end
    }
  })();
  const producing = (async () => {
    const inflight = new Set<Promise<unknown>>();
    let n = 0;
    while (performance.now() < deadline) {
      const started = performance.now();
      const p = sender
        .send({ messageId: `healthy-${++n}`, durable: true, body: n }, { timeoutMs: 60_000 })
        .then((r) => {
          if (r.state === 'accepted') accepted++;
          slowestSendMs = Math.max(slowestSendMs, performance.now() - started);
        })
        .catch(() => undefined)
        .finally(() => inflight.delete(p));
      inflight.add(p);
      while (inflight.size >= window) await Promise.race(inflight);
    }
    await Promise.all(inflight);
  })();
  await producing;
  await receiver.close().catch(() => undefined);
  await consuming;
  await conn.close();
  const r: HealthyFailoverResult = {
    seconds,
    accepted,
    received,
    failovers,
    unresponsiveFailovers,
    slowestSendMs: Math.round(slowestSendMs),
  };
  log(
    `quorate healthy ${seconds} s: ${accepted} sends accepted, ${received} received, slowest send ${r.slowestSendMs} ms; ` +
      `failovers ${failovers}, of which unresponsive ${unresponsiveFailovers} (goal 0)`,
  );
  return r;
}

/** `:port` of a member URL, for log lines. */
export function portOf(url: string | undefined): string {
  return url ? `:${new URL(url).port}` : '?';
}
