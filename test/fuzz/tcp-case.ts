/**
 * One hostile connection over real TCP: write the given chunks (optionally spaced in time),
 * collect every byte the broker answers, and wait (bounded) until the broker ends the socket.
 */
import net from 'node:net';
import { decodeOutput, type OutFrame } from './harness.js';

export interface TcpCaseResult {
  frames: OutFrame[];
  /** The broker ended (FIN) or reset the socket within the bound. */
  ended: boolean;
  ms: number;
}

export function runTcpCase(
  port: number,
  chunks: readonly Uint8Array[],
  opts: { gapMs?: number; boundMs: number },
): Promise<TcpCaseResult> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const got: Buffer[] = [];
    let done = false;
    const socket = net.connect(port, '127.0.0.1');
    const finish = (ended: boolean): void => {
      if (done) return;
      done = true;
      clearTimeout(bound);
      socket.destroy();
      resolve({ frames: decodeOutput(got), ended, ms: Date.now() - started });
    };
    const bound = setTimeout(() => finish(false), opts.boundMs);
    socket.on('data', (d: Buffer) => got.push(d));
    socket.on('end', () => finish(true));
    socket.on('close', () => finish(true));
    // a reset after the broker closed is the broker ending it too (it destroys after its grace)
    socket.on('error', () => {});
    socket.once('connect', () => {
      void (async () => {
        for (const c of chunks) {
          if (done || socket.destroyed) return;
          socket.write(c);
          if (opts.gapMs) await new Promise((r) => setTimeout(r, opts.gapMs));
        }
      })().catch(reject);
    });
  });
}

/** Runs `tasks` with at most `limit` in flight; resolves with their results in order. */
export async function pool<T>(tasks: readonly (() => Promise<T>)[], limit: number): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < tasks.length) {
      const i = next++;
      results[i] = await tasks[i]!();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
  return results;
}

/** The broker process's resident memory now and at its peak (VmRSS, VmHWM), in KiB. */
export async function procMemory(pid: number): Promise<{ rssKiB: number; peakKiB: number }> {
  const { readFile } = await import('node:fs/promises');
  const s = await readFile(`/proc/${pid}/status`, 'utf8');
  const kib = (key: string): number =>
    Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(s)?.[1] ?? Number.NaN);
  return { rssKiB: kib('VmRSS'), peakKiB: kib('VmHWM') };
}
