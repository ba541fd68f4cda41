/**
 * The cluster bench's throughput figure (bench/cluster.ts, bench/cluster-auth.ts): send then
 * receive through one port after a warm-up, msg/s of each phase and the CPU per message of each
 * counted process, and the CPU lines printed under a target's rates.
 */

import { close, connect, receiveN, sendN } from './cluster-rhea-client.js';
import {
  type CountedProcess,
  type CpuSnapshot,
  cpuPerMessageUs,
  cpuSnapshot,
  formatCpuPerMessage,
} from './process-cpu.js';

export interface Throughput {
  target: string;
  messages: number;
  /** Times the sender had to reconnect and re-send (a leader change during the run). */
  reconnects: number;
  sendPerSecond: number;
  receivePerSecond: number;
  /** messages / (send time + receive time) */
  sendThenReceivePerSecond: number;
  /**
   * CPU per message (microseconds, from the OS) of each process in the send and in the receive
   * phase: `client` (this process, rhea) and the broker (`broker`, or `leader n1`, `follower n2`...).
   */
  cpuUs: { send: Record<string, number | null>; receive: Record<string, number | null> };
}

export async function measure(
  port: number,
  target: string,
  n: number,
  bytes: number,
  counted: readonly CountedProcess[] = [{ label: 'client' }],
): Promise<Throughput> {
  const body = Buffer.alloc(bytes, 7);
  const address = `bench-${target}`;
  // warm-up (JIT, queue creation), not counted
  await sendN(port, address, 200, body, `${target}-warm`);
  const w = await connect(port);
  await receiveN(w, address, 200);
  await close(w);
  const s0 = cpuSnapshot(counted);
  const sent = await sendN(port, address, n, body, target);
  const s1 = cpuSnapshot(counted);
  const sendS = sent.seconds;
  const d = await connect(port);
  const recvS = await receiveN(d, address, n);
  const s2 = cpuSnapshot(counted);
  await close(d);
  const perMessage = (a: CpuSnapshot, b: CpuSnapshot) => Object.fromEntries(cpuPerMessageUs(a, b, n));
  return {
    target,
    messages: n,
    reconnects: sent.reconnects,
    sendPerSecond: Math.round(n / sendS),
    receivePerSecond: Math.round(n / recvS),
    sendThenReceivePerSecond: Math.round(n / (sendS + recvS)),
    cpuUs: { send: perMessage(s0, s1), receive: perMessage(s1, s2) },
  };
}

/** The CPU lines under a target's rates. */
export function logCpu(t: Throughput, log: (line: string) => void): void {
  log(`    CPU per message, send:    ${formatCpuPerMessage(new Map(Object.entries(t.cpuUs.send)))}`);
  log(`    CPU per message, receive: ${formatCpuPerMessage(new Map(Object.entries(t.cpuUs.receive)))}`);
}
