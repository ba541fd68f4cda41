import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';

/**
 * Whether a process is stopped (SIGSTOP) according to /proc/<pid>/stat, or undefined where
 * there is no /proc (or the process is gone). Signals are asynchronous: a test that pauses a
 * member wants to know the pause took effect before it asserts anything.
 */
export async function isProcessStopped(pid: number): Promise<boolean | undefined> {
  let stat: string;
  try {
    stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // Format: "pid (comm) S ...": comm may contain spaces and parentheses, so split at the last ')'.
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  return state === 'T' || state === 't';
}

/** Polls /proc until the process is in the wanted state (bounded; a no-op without /proc). */
export async function waitForProcessState(
  pid: number,
  want: 'stopped' | 'running',
  timeoutMs = 5_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const stopped = await isProcessStopped(pid);
    if (stopped === undefined || stopped === (want === 'stopped') || Date.now() > deadline) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/**
 * Whether a live process has this PID: signal 0 probes without delivering anything, and a zombie
 * (exited, not yet reaped by its new parent after its supervisor died) counts as gone.
 */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    // No /proc on this platform: trust the signal probe. With /proc, the process just vanished.
    return !existsSync('/proc/self/stat');
  }
}
