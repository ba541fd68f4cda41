/**
 * Transactional sends batched 100 per transaction vs plain sends, through our single node with a
 * durable store: Qpid Proton's own example senders (`simple_send.py`, `tx_send.py -b 100`, from
 * libqpid-proton11-dev-examples) send the same number of messages; each run is timed from start
 * to exit (Python start-up included in both), and the ratio tx/plain printed. Target: >= 0.8.
 *
 *   npx tsx bench/run.ts transactions        (TX_BENCH_MESSAGES=N to change the count, default 20000)
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBroker } from '../src/broker.js';

const EXAMPLES = '/usr/share/proton/examples/python';

function timeExample(script: string, args: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn('/usr/bin/python3', [join(EXAMPLES, script), ...args], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (b: Buffer) => {
      err += b.toString();
    });
    child.on('close', (code) => {
      if (code === 0) resolve(performance.now() - started);
      else reject(new Error(`${script} exited ${code}: ${err}`));
    });
  });
}

export async function run(opts: { log?: (line: string) => void } = {}): Promise<unknown> {
  const log = opts.log ?? (() => {});
  const n = Number(process.env.TX_BENCH_MESSAGES ?? 20_000);
  const dataDir = mkdtempSync(join(tmpdir(), 'quorate-tx-bench-'));
  const broker = await startBroker({ dataDir });
  try {
    const at = (q: string) => `127.0.0.1:${broker.port}/${q}`;
    const rounds: Array<{ plain: number; tx: number }> = [];
    for (let round = 0; round < 3; round++) {
      const plainMs = await timeExample('simple_send.py', ['-a', at(`plain-${round}`), '-m', String(n)]);
      const txMs = await timeExample('tx_send.py', ['-a', at(`tx-${round}`), '-m', String(n), '-b', '100']);
      const plain = Math.round((n / plainMs) * 1000);
      const tx = Math.round((n / txMs) * 1000);
      rounds.push({ plain, tx });
      log(
        `round ${round + 1}: plain ${plain} msg/s, transactional (100 per txn) ${tx} msg/s, ratio ${(tx / plain).toFixed(2)}`,
      );
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const ratio = median(rounds.map((r) => r.tx / r.plain));
    log(`median ratio transactional/plain: ${ratio.toFixed(2)} (target >= 0.80), ${n} messages per run`);
    return { messages: n, rounds, medianRatio: ratio };
  } finally {
    await broker.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
