/**
 * kill -9 against the real event store: a child appends as fast as it can and reports each
 * event once its commit resolved durable; we SIGKILL it by PID mid-stream, reopen the store and
 * check every acknowledged enqueue is there (unless its confirmed accept removed it) and no
 * confirmed-accepted message came back. Three rounds on the same directory, with compaction on.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../../../src/cluster-broker/store/event-store.js';

const CHILD = join(import.meta.dirname, '../../../cluster-broker/store/fixtures/store-kill-child.ts');
let dir = '';
const children: ChildProcess[] = [];

afterAll(async () => {
  for (const c of children)
    if (c.exitCode === null && c.signalCode === null && c.pid) process.kill(c.pid, 'SIGKILL');
  if (dir) await rm(dir, { recursive: true, force: true });
});

interface Round {
  acked: Set<number>;
  /** Accepts the child started (in doubt unless also in `accepted`). */
  tried: Set<number>;
  accepted: Set<number>;
}

/** Runs the child until it has acknowledged `killAfter` enqueues, then SIGKILLs it. */
function runRound(first: number, killAfter: number): Promise<Round> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, dir, String(first)], {
      cwd: join(import.meta.dirname, '../../../..'),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    const round: Round = { acked: new Set(), tried: new Set(), accepted: new Set() };
    let stderr = '';
    let killed = false;
    child.stderr.on('data', (d) => {
      stderr += String(d);
    });
    createInterface({ input: child.stdout }).on('line', (line) => {
      const [kind, n] = line.split(' ');
      if (kind === 'ack') round.acked.add(Number(n));
      else if (kind === 'acc') round.accepted.add(Number(n));
      else if (kind === 'try') round.tried.add(Number(n));
      if (!killed && round.acked.size >= killAfter) {
        killed = true;
        process.kill(child.pid!, 'SIGKILL');
      }
    });
    child.on('exit', (code, signal) => {
      if (signal === 'SIGKILL') resolve(round);
      else reject(new Error(`child exited ${code} ${signal}: ${stderr}`));
    });
  });
}

describe('event store survives kill -9', () => {
  it('every acknowledged enqueue survives, no confirmed accept is undone (3 rounds)', async () => {
    dir = await mkdtemp(join(tmpdir(), 'quorate-kill-'));
    const acked = new Set<number>();
    const accepted = new Set<number>();
    const tried = new Set<number>();
    for (let r = 0; r < 3; r++) {
      const round = await runRound(r * 1_000_000, 2500 + r * 700);
      for (const n of round.acked) acked.add(n);
      for (const n of round.accepted) accepted.add(n);
      for (const n of round.tried) tried.add(n);
      const store = await openStore(dir);
      const present = new Set(
        store.state
          .browse('q')
          .map((m) => Number(new TextDecoder().decode(m.message).split('|')[0].slice(1))),
      );
      await store.close();
      // an acknowledged message may be gone only if a consumer accepted it (confirmed or in doubt)
      const lost = [...acked].filter((n) => !tried.has(n) && !present.has(n));
      const resurrected = [...accepted].filter((n) => present.has(n));
      expect(round.acked.size).toBeGreaterThanOrEqual(2500);
      expect(round.accepted.size).toBeGreaterThan(0);
      expect(lost, `round ${r}: acknowledged but missing`).toEqual([]);
      expect(resurrected, `round ${r}: confirmed accept undone`).toEqual([]);
      for (const n of accepted) expect(tried.has(n)).toBe(true);
    }
  });
});
