/**
 * The broker as a real process for the limits run: its CLI through tsx, with the soft file
 * descriptor limit raised to the hard one (1,000 connections need more than many defaults give),
 * its ready line read from stdout, its memory read from /proc.
 */
import { execFileSync, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { awaitBrokerReady, type BrokerProcess } from '../support/broker-process.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** A broker process started for the limits run. */
export type BrokerChild = BrokerProcess;

/** The soft and hard `ulimit -n` a child of this process gets. */
export function fileLimits(): { soft: number; hard: number } {
  const out = execFileSync('sh', ['-c', 'echo $(ulimit -S -n) $(ulimit -H -n)'], { encoding: 'utf8' }).trim();
  const [soft, hard] = out.split(' ').map((v) => (v === 'unlimited' ? Number.POSITIVE_INFINITY : Number(v)));
  return { soft: soft!, hard: hard! };
}

export async function startBrokerChild(args: readonly string[], timeoutMs = 60_000): Promise<BrokerChild> {
  const cmd = [process.execPath, '--import', 'tsx', 'src/cluster-broker/cli/main.ts', ...args]
    .map((a) => `'${a.replace(/'/g, `'\\''`)}'`)
    .join(' ');
  // raise the soft fd limit to the hard one for the broker, then exec it (same PID)
  const child = spawn('sh', ['-c', `ulimit -S -n $(ulimit -H -n) 2>/dev/null; exec ${cmd}`], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return awaitBrokerReady(child, timeoutMs);
}

/** VmRSS and VmHWM (peak) of a process, in MiB, from /proc. */
export function memoryOf(pid: number): { rssMiB: number; peakMiB: number } {
  const s = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (key: string): number =>
    Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(s)?.[1] ?? Number.NaN);
  return { rssMiB: Math.round(kib('VmRSS') / 102.4) / 10, peakMiB: Math.round(kib('VmHWM') / 102.4) / 10 };
}

/** Open file descriptors of a process (its /proc fd directory). */
export function openFds(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return Number.NaN;
  }
}
