/**
 * The two clients every end-to-end bench drives with the same workload: send `n` messages with at
 * most `window` unsettled (settled on accept), then receive them with credit `window`, each
 * accepted. Returns the send and receive phases' wall times and the CPU time this process spent
 * in each (user + system: on a shared machine a steadier measure of the client's own cost than
 * the rate, which follows whatever else runs; the brokers run in other processes). Both clients
 * end each phase with a full collection, read the CPU after it and start the send after one
 * that no phase counts, so each phase pays for its own garbage (the wall times end before it). Our client receives either one
 * delivery at a time (`for await`, `quorateClient`) or in batches (`receive({ max })`,
 * `quorateBatchClient`).
 */
import rhea from 'rhea';
import { loadQuorate } from './built-package.js';
import { collectGarbage } from './full-gc.js';
import { type CountedProcess, type CpuSnapshot, cpuSnapshot } from './process-cpu.js';
import { receiveAccepting } from './receive-loop.js';

export type BenchClient = (
  url: URL,
  queue: string,
  n: number,
  body: Buffer,
  window: number,
  counted?: readonly CountedProcess[],
) => Promise<PhaseTimes>;

/**
 * Wall and CPU milliseconds of the send phase and of the receive phase; with `counted`, also the
 * CPU snapshots of those processes (bench/lib/process-cpu.ts) when sending starts, when the last
 * send is accepted and when the last message is received (the last two after the phase's
 * collection).
 */
export interface PhaseTimes {
  sendMs: number;
  receiveMs: number;
  sendCpuMs: number;
  receiveCpuMs: number;
  snapshots?: [CpuSnapshot, CpuSnapshot, CpuSnapshot];
}

/** CPU time (user + system) of this process since `from`, in ms. */
const cpuMs = (from: NodeJS.CpuUsage): number => {
  const d = process.cpuUsage(from);
  return (d.user + d.system) / 1000;
};

// ---------------------------------------------------------------- clients

export const rheaClient: BenchClient = (url, queue, n, body, window, counted) =>
  new Promise((resolve, reject) => {
    const container = rhea.create_container();
    const conn = container.connect({
      host: url.hostname,
      port: Number(url.port),
      reconnect: false,
      ...(url.username
        ? { username: decodeURIComponent(url.username), password: decodeURIComponent(url.password) }
        : {}),
    } as rhea.ConnectionOptions);
    const data = (rhea as unknown as { message: { data_section(b: Buffer): unknown } }).message.data_section(
      body,
    );
    let sent = 0;
    let settled = 0;
    let got = 0;
    // what the runs before left is collected now, outside both phases
    collectGarbage();
    const s0 = counted && cpuSnapshot(counted);
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    let t1 = 0;
    let s1: CpuSnapshot | undefined;
    let sendCpuMs = 0;
    let c1 = c0;
    conn.on('connection_error', (ctx) =>
      reject(new Error(`connection error: ${JSON.stringify(ctx.connection.error)}`)),
    );
    conn.on('disconnected', (ctx) => {
      if (got < n) reject(new Error(`disconnected: ${String(ctx.error ?? '')}`));
    });
    const sender = conn.open_sender(queue);
    const pump = () => {
      while (sent < n && sent - settled < window && sender.sendable()) {
        sender.send({ body: data, message_id: `r-${sent}` });
        sent++;
      }
    };
    sender.on('sendable', pump);
    sender.on('rejected', () => reject(new Error('rejected')));
    sender.on('accepted', () => {
      settled++;
      if (settled < n) {
        pump();
        return;
      }
      t1 = performance.now();
      // the send pays for its own garbage: collected, and counted, before its CPU is read
      collectGarbage();
      sendCpuMs = cpuMs(c0);
      s1 = counted && cpuSnapshot(counted);
      c1 = process.cpuUsage();
      sender.close();
      const receiver = conn.open_receiver({ source: queue, credit_window: window });
      receiver.on('message', () => {
        if (++got === n) {
          const t2 = performance.now();
          collectGarbage();
          const receiveCpuMs = cpuMs(c1);
          const s2 = counted && cpuSnapshot(counted);
          conn.close();
          resolve({
            sendMs: t1 - t0,
            receiveMs: t2 - t1,
            sendCpuMs,
            receiveCpuMs,
            ...(s0 && s1 && s2 ? { snapshots: [s0, s1, s2] as PhaseTimes['snapshots'] } : {}),
          });
        }
      });
    });
  });

/** How our client takes deliveries: the async iterator, or batch receives of up to `window`. */
export type ReceiveMode = 'iterator' | 'batch';

/** Our client, receiving with `for await`. */
export const quorateClient: BenchClient = (url, queue, n, body, window, counted) =>
  ourClient(url, queue, n, body, window, 'iterator', counted);

/** Our client, receiving with `receive({ max: window })`. */
export const quorateBatchClient: BenchClient = (url, queue, n, body, window, counted) =>
  ourClient(url, queue, n, body, window, 'batch', counted);

/** Our client, if the package root exports `connect` (it is being written; a failure is reported, not fatal). */
async function ourClient(
  url: URL,
  queue: string,
  n: number,
  body: Buffer,
  window: number,
  mode: ReceiveMode,
  counted?: readonly CountedProcess[],
): Promise<PhaseTimes> {
  const mod = (await loadQuorate()) as unknown as {
    connect?: (o: { urls: string; reconnect?: false }) => Promise<OurConnection>;
  };
  if (typeof mod.connect !== 'function') throw new Error('src/index.ts exports no connect() yet');
  const conn = await mod.connect({ urls: url.href, reconnect: false });
  try {
    const sender = await conn.openSender(queue);
    let next = 0;
    // the same three collections as rhea's run: before the send (not counted), at the end of each phase
    collectGarbage();
    const s0 = counted && cpuSnapshot(counted);
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    const worker = async () => {
      while (next < n) {
        const i = next++;
        const r = await sender.send({ body, messageId: `o-${i}` });
        if (r.state !== 'accepted') throw new Error(`send ${i}: ${r.state}`);
      }
    };
    await Promise.all(Array.from({ length: window }, worker));
    const t1 = performance.now();
    collectGarbage();
    const sendCpuMs = cpuMs(c0);
    const s1 = counted && cpuSnapshot(counted);
    const c1 = process.cpuUsage();
    await sender.close();
    const receiver = await conn.openReceiver(queue, { credit: window, confirmAccept: false });
    await receiveAccepting(receiver, n, mode, window);
    const t2 = performance.now();
    collectGarbage();
    const receiveCpuMs = cpuMs(c1);
    const s2 = counted && cpuSnapshot(counted);
    await receiver.close().catch(() => {});
    return {
      sendMs: t1 - t0,
      receiveMs: t2 - t1,
      sendCpuMs,
      receiveCpuMs,
      ...(s0 && s1 && s2 ? { snapshots: [s0, s1, s2] as PhaseTimes['snapshots'] } : {}),
    };
  } finally {
    await conn.close().catch(() => {});
  }
}

interface OurDelivery {
  accept(): Promise<void>;
}

interface OurReceiver extends AsyncIterable<OurDelivery> {
  receive(o: { max: number; timeoutMs: number }): Promise<OurDelivery[]>;
  close(): Promise<void>;
}

interface OurConnection {
  openSender(a: string): Promise<{
    send(m: { body: Buffer; messageId: string }): Promise<{ state: string }>;
    close(): Promise<void>;
  }>;
  openReceiver(a: string, o: { credit: number; confirmAccept: boolean }): Promise<OurReceiver>;
  close(): Promise<void>;
}
