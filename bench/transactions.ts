/**
 * Transactional sends batched 100 per transaction vs plain sends, through our single node with a
 * durable store, by two clients: Qpid Proton's own example senders (`simple_send.py`,
 * `tx_send.py -b 100`, from libqpid-proton11-dev-examples; each run timed from start to exit,
 * Python start-up included in both) and the quorate client (plain: up to 1,000 sends in flight;
 * transactional: `conn.transaction()` after `conn.transaction()`, each with its 100 sends in
 * flight together), and the quorate client again with ten transactions of 100 in flight at once
 * (1,000 sends in flight, the same window as its plain sends). The ratio tx/plain is printed per
 * client and shape. Target: >= 0.8.
 *
 * Why two shapes: a transaction's commit is answered only once it is on disk, so one transaction
 * after the other waits for one fsync per 100 messages with nothing else in flight, while plain
 * sends keep the disk and the connection busy together (group commit over up to 1,000 sends).
 * Overlapped transactions get the same overlap.
 *
 *   npx tsx bench/run.ts transactions        (TX_BENCH_MESSAGES=N to change the count, default 20000)
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBroker } from '../src/broker.js';
import { type Connection, connect } from '../src/index.js';

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
    log(
      `Proton: median ratio transactional/plain: ${ratio.toFixed(2)} (target >= 0.80), ${n} messages per run`,
    );
    const conn = await connect({ urls: broker.url, containerId: 'tx-bench' });
    const ours: Array<{ plain: number; tx: number; overlapped: number }> = [];
    try {
      for (let round = 0; round < 3; round++) {
        const plain = await quoratePlain(conn, `q-plain-${round}`, n);
        const tx = await quorateTransactional(conn, `q-tx-${round}`, n, 1);
        const overlapped = await quorateTransactional(conn, `q-txo-${round}`, n, OVERLAPPED);
        ours.push({ plain, tx, overlapped });
        log(
          `quorate round ${round + 1}: plain ${plain} msg/s; transactional (100 per txn) one at a time ${tx} msg/s, ratio ${(tx / plain).toFixed(2)}; ${OVERLAPPED} at a time ${overlapped} msg/s, ratio ${(overlapped / plain).toFixed(2)}`,
        );
      }
    } finally {
      await conn.close();
    }
    const ourRatio = median(ours.map((r) => r.tx / r.plain));
    const overlappedRatio = median(ours.map((r) => r.overlapped / r.plain));
    log(
      `quorate: median ratio transactional/plain: one at a time ${ourRatio.toFixed(2)}, ${OVERLAPPED} at a time ${overlappedRatio.toFixed(2)} (target >= 0.80)`,
    );
    return {
      messages: n,
      rounds,
      medianRatio: ratio,
      quorate: { rounds: ours, medianRatio: ourRatio, overlappedMedianRatio: overlappedRatio },
    };
  } finally {
    await broker.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** msg/s of `n` plain sends, at most 1,000 in flight. */
async function quoratePlain(conn: Connection, queue: string, n: number): Promise<number> {
  const sender = await conn.openSender(queue);
  const body = new Uint8Array(1024);
  const started = performance.now();
  const inflight = new Set<Promise<unknown>>();
  for (let i = 0; i < n; i++) {
    const p: Promise<unknown> = sender.send({ body }).finally(() => inflight.delete(p));
    inflight.add(p);
    if (inflight.size >= 1000) await Promise.race(inflight);
  }
  await Promise.all(inflight);
  const rate = Math.round((n / (performance.now() - started)) * 1000);
  await sender.close();
  return rate;
}

/** Transactions in flight at once in the overlapped shape: 10 x 100 = the plain sends' window. */
const OVERLAPPED = 10;

/** msg/s of `n` sends in transactions of 100, `inFlight` transactions running at once. */
async function quorateTransactional(
  conn: Connection,
  queue: string,
  n: number,
  inFlight: number,
): Promise<number> {
  const sender = await conn.openSender(queue);
  const body = new Uint8Array(1024);
  const started = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const batch = Math.min(100, n - next);
      next += batch;
      await conn.transaction(async (tx) => {
        await Promise.all(Array.from({ length: batch }, () => sender.send({ body }, { tx })));
      });
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  const rate = Math.round((n / (performance.now() - started)) * 1000);
  await sender.close();
  return rate;
}
