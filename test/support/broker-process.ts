/** Starts `quorate-broker` as a real process (through tsx) and reads its JSON ready line. */
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

export interface BrokerProcess {
  child: ChildProcess;
  pid: number;
  port: number;
  /** The monitoring port (started with --http-port), else undefined. */
  httpPort: number | undefined;
  stderr: string[];
  /** Resolves with the exit code (or signal name). */
  exited: Promise<number | string>;
}

const ENTRY = 'src/cluster-broker/cli/main.ts';

/** `nodeFlags` go to node before the entry (e.g. `--max-old-space-size=256` for a small heap). */
export async function spawnBroker(
  args: string[],
  timeoutMs = 30_000,
  nodeFlags: readonly string[] = [],
): Promise<BrokerProcess> {
  const child = spawn(process.execPath, [...nodeFlags, '--import', 'tsx', ENTRY, ...args], {
    cwd: new URL('../..', import.meta.url).pathname,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return awaitBrokerReady(child, timeoutMs);
}

/**
 * Waits for a started broker's JSON ready line on stdout (rejecting if it exits first or stays
 * silent past `timeoutMs`), keeping its first stderr lines for diagnostics.
 */
export async function awaitBrokerReady(child: ChildProcess, timeoutMs: number): Promise<BrokerProcess> {
  const stderr: string[] = [];
  createInterface({ input: child.stderr! }).on('line', (l) => {
    if (stderr.length < 500) stderr.push(l);
  });
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)),
  );
  const ready = await new Promise<{ amqpPort: number; pid: number; httpPort?: number }>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`broker: no ready line within ${timeoutMs} ms: ${stderr.join('\n')}`)),
      timeoutMs,
    );
    createInterface({ input: child.stdout! }).on('line', (line) => {
      try {
        const v = JSON.parse(line) as { ready?: boolean; amqpPort: number; pid: number; httpPort?: number };
        if (v.ready === true) {
          clearTimeout(timer);
          resolve(v);
        }
      } catch {
        // not the ready line
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`broker exited (${code}) before ready: ${stderr.join('\n')}`));
    });
  });
  return { child, pid: ready.pid, port: ready.amqpPort, httpPort: ready.httpPort, stderr, exited };
}
