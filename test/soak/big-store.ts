/**
 * A real single-node store past 2 GiB: a broker process fills its log beyond 2 GiB (1 MiB
 * messages, some consumed so the log stays larger than the live bytes and no compaction runs),
 * then is stopped with SIGTERM and restarted, killed with SIGKILL and restarted, restarted with
 * `--repair`, and finally restarted on the same records rewritten as ONE segment past 2 GiB (a
 * store written before segments rolled). After each start every acknowledged message must be
 * there; at the end they are all received and checked byte for byte.
 *
 *   npx tsx test/soak/big-store.ts [--dir D] [--live N] [--churn N]
 *
 * Prints progress on stderr (every batch published or consumed, with the log's size) and one
 * summary line on stdout; exits 1 on any loss or when the log never passed 2 GiB. It survives
 * what is not the store's fault: a client connection lost mid-batch is reopened and the batch's
 * unsettled messages sent again (the check then allows duplicates, never a loss), and a broker
 * that fails to start because its toolchain could not be loaded (a module not found while
 * node_modules is being reinstalled) is started again. The data dir is removed at the end unless
 * `--dir` names one (then it is left for inspection).
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rename, rm, stat, statfs } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import { SEGMENT_HEADER_BYTES, segmentHeader } from '../../src/cluster-broker/store/segment-header.js';
import { listSegments, segmentName } from '../../src/cluster-broker/store/segments.js';
import { closeConnection, connect, sendAll, TestReceiver } from '../cluster-broker/server/rhea-client.js';
import { type BrokerProcess, spawnBroker } from '../support/broker-process.js';

const MIB = 1024 * 1024;
const TWO_GIB = 2 * 1024 * MIB;

const { values } = parseArgs({
  options: {
    dir: { type: 'string' },
    live: { type: 'string', default: '1150' },
    churn: { type: 'string', default: '1050' },
  },
});
const LIVE = Number(values.live);
const CHURN = Number(values.churn);
const BATCH = 50;

/** Message i's body: 1 MiB, its index in the first 8 bytes, the rest derived from it. */
function body(i: number): Buffer {
  const b = Buffer.alloc(MIB);
  b.writeUInt32BE(i, 0);
  for (let at = 8; at < b.length; at += 4) b.writeUInt32BE((i * 2654435761 + at) >>> 0, at);
  return b;
}
const digest = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

const progress = (line: string) => process.stderr.write(`big-store: ${line}\n`);

/** A start that failed because the broker's code could not be loaded, not because of its store. */
const TOOLCHAIN_FAILURE = /ERR_MODULE_NOT_FOUND|Cannot find (package|module)|ERR_UNKNOWN_FILE_EXTENSION/;
const START_ATTEMPTS = 10;

async function start(dir: string, extra: string[] = []): Promise<BrokerProcess> {
  const args = ['--port', '0', '--host', '127.0.0.1', '--data-dir', dir, '--http-port', '0', ...extra];
  for (let attempt = 1; ; attempt++) {
    try {
      // recovery reads the whole log: a generous deadline on a busy machine
      return await spawnBroker(args, 600_000);
    } catch (err) {
      const message = (err as Error).message;
      if (attempt >= START_ATTEMPTS || !TOOLCHAIN_FAILURE.test(message)) throw err;
      progress(`broker could not load its code (attempt ${attempt}), starting it again`);
      await new Promise((r) => setTimeout(r, 5_000 * attempt));
    }
  }
}

async function stop(b: BrokerProcess, signal: 'SIGTERM' | 'SIGKILL'): Promise<void> {
  b.child.kill(signal);
  await b.exited;
}

async function depth(b: BrokerProcess, queue: string): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${b.httpPort}/api/queues`);
  const v = (await res.json()) as { queues: { name: string; messages: number }[] };
  return v.queues.find((q) => q.name === queue)?.messages ?? 0;
}

async function logBytes(dir: string): Promise<{ total: number; largest: number; segments: number }> {
  let total = 0;
  let largest = 0;
  const segs = await listSegments(dir);
  for (const s of segs) {
    const size = (await stat(join(dir, s.name))).size;
    total += size;
    largest = Math.max(largest, size);
  }
  return { total, largest, segments: segs.length };
}

/** Sends `ids` on a fresh connection; returns the ids accepted, resending on a lost connection. */
async function sendBatch(port: number, queue: string, ids: number[]): Promise<number[]> {
  for (let attempt = 1; ; attempt++) {
    const conn = await connect({ port });
    try {
      const outcomes = await sendAll(
        conn,
        queue,
        ids.map((id) => ({ body: body(id) })),
      );
      return ids.filter((_, k) => outcomes[k]!.state === 'accepted');
    } catch (err) {
      // outcomes unknown: send the batch again (a duplicate is allowed, a loss is not)
      if (attempt >= 5) throw err;
      progress(`batch from ${ids[0]} to ${queue}: ${(err as Error).message}; sending it again`);
    } finally {
      await closeConnection(conn);
    }
  }
}

/** Publishes messages [from, to) to `queue`; returns the indexes the broker accepted. */
async function publish(
  port: number,
  queue: string,
  from: number,
  to: number,
  dir?: string,
): Promise<number[]> {
  const accepted: number[] = [];
  for (let i = from; i < to; i += BATCH) {
    const ids = Array.from({ length: Math.min(BATCH, to - i) }, (_, k) => i + k);
    accepted.push(...(await sendBatch(port, queue, ids)));
    if (dir !== undefined)
      progress(
        `${queue}: ${accepted.length}/${to - from} accepted; log ${(await logBytes(dir)).total} bytes`,
      );
  }
  return accepted;
}

/** Receives and accepts `n` messages of `queue`, returning each body's digest by index. */
async function consume(port: number, queue: string, n: number): Promise<Map<number, string>> {
  const conn = await connect({ port });
  const got = new Map<number, string>();
  try {
    const r = new TestReceiver(conn, queue);
    await r.opened;
    for (let left = n; left > 0; ) {
      const batch = await r.next(Math.min(BATCH, left), 120_000);
      for (const { message, delivery } of batch) {
        const raw = message.body as { content?: Buffer } | Buffer;
        const bytes = Buffer.isBuffer(raw) ? raw : (raw.content ?? Buffer.alloc(0));
        got.set(bytes.readUInt32BE(0), digest(bytes)); // a resent duplicate lands on its index
        delivery.accept();
      }
      left -= batch.length;
    }
    return got;
  } finally {
    await closeConnection(conn);
  }
}

/** Rewrites the segments as one segment starting at index 1 (what a store without rolling held). */
async function mergeSegments(dir: string): Promise<void> {
  const segs = await listSegments(dir);
  if (segs[0]?.start !== 1) throw new Error('the log was compacted: no single segment to build');
  const merged = join(dir, 'merged.tmp');
  const out = createWriteStream(merged);
  // each pipeline below adds its listeners to `out` (end: false keeps it open for the next)
  out.setMaxListeners(2 * segs.length + 10);
  out.write(segmentHeader(1));
  for (const s of segs) {
    await pipeline(createReadStream(join(dir, s.name), { start: SEGMENT_HEADER_BYTES }), out, { end: false });
  }
  await new Promise<void>((resolve, reject) =>
    out.end((err?: Error | null) => (err ? reject(err) : resolve())),
  );
  for (const s of segs) await rm(join(dir, s.name));
  await rename(merged, join(dir, segmentName(1)));
}

async function main(): Promise<void> {
  const began = Date.now();
  const dir = values.dir ?? (await mkdtemp(join(tmpdir(), 'quorate-big-store-')));
  const problems: string[] = [];
  const phases: string[] = [];
  const phase = (what: string) => {
    phases.push(`${what} ${((Date.now() - began) / 1000).toFixed(0)}s`);
    process.stderr.write(`big-store: ${what} (${((Date.now() - began) / 1000).toFixed(0)} s)\n`);
  };
  let broker: BrokerProcess | undefined;
  try {
    // the log, then a merged copy of it next to it: twice what is published, and room to spare
    const free = await statfs(dir).then((s) => s.bavail * s.bsize);
    const need = 2 * (LIVE + CHURN) * MIB + TWO_GIB;
    if (free < need) throw new Error(`${dir}: ${free} bytes free, this run needs ${need}`);
    broker = await start(dir);
    const acked = await publish(broker.port, 'live', 0, LIVE, dir);
    phase(`published ${acked.length}/${LIVE} live`);
    // duplicates of resent batches are consumed with them: churn until the queue is empty
    for (let i = 0; i < CHURN; i += BATCH) {
      const n = Math.min(BATCH, CHURN - i);
      const sent = await publish(broker.port, 'churn', LIVE + i, LIVE + i + n);
      await consume(broker.port, 'churn', Math.max(sent.length, await depth(broker, 'churn')));
      progress(`churn: ${i + n}/${CHURN}; log ${(await logBytes(dir)).total} bytes`);
    }
    phase(`${CHURN} churned`);
    const filled = await logBytes(dir);
    if (filled.total <= TWO_GIB) problems.push(`the log holds ${filled.total} bytes, not past 2 GiB`);
    const check = async (when: string) => {
      const d = await depth(broker!, 'live');
      // a batch resent after a lost connection may have been stored twice: at least, never fewer
      if (d < acked.length) problems.push(`${when}: ${d} live messages, ${acked.length} acknowledged`);
      phase(`${when}: ${d} live`);
    };

    await stop(broker, 'SIGTERM');
    broker = await start(dir);
    await check('after SIGTERM');
    await stop(broker, 'SIGKILL');
    broker = await start(dir);
    await check('after SIGKILL');
    await stop(broker, 'SIGTERM');
    broker = await start(dir, ['--repair']);
    await check('after --repair');
    await stop(broker, 'SIGTERM');
    await mergeSegments(dir);
    const merged = await logBytes(dir);
    if (merged.largest <= TWO_GIB)
      problems.push(`the merged segment holds ${merged.largest} bytes, not past 2 GiB`);
    broker = await start(dir);
    await check(`one ${merged.largest}-byte segment`);

    const got = await consume(broker.port, 'live', await depth(broker, 'live'));
    for (const i of acked) {
      const d = got.get(i);
      if (d === undefined) problems.push(`message ${i} is missing`);
      else if (d !== digest(body(i))) problems.push(`message ${i} differs`);
    }
    await stop(broker, 'SIGTERM');
    broker = undefined;
    const seconds = ((Date.now() - began) / 1000).toFixed(0);
    const verdict = problems.length === 0 ? 'ok' : `LOSS (${problems.length} problems)`;
    console.log(
      `big-store: ${verdict}: ${acked.length} acknowledged 1 MiB messages + ${CHURN} consumed; log ${filled.total} bytes in ${filled.segments} segment(s) (largest ${filled.largest}), then one segment of ${merged.largest}; SIGTERM, SIGKILL, --repair, single segment: all restarts kept every acknowledged message: ${problems.length === 0}; ${seconds} s`,
    );
    for (const p of problems.slice(0, 20)) console.log(`  ${p}`);
    process.exitCode = problems.length === 0 ? 0 : 1;
  } finally {
    if (broker) await stop(broker, 'SIGKILL');
    if (values.dir === undefined) await rm(dir, { recursive: true, force: true });
    process.stderr.write(`big-store: phases: ${phases.join(', ')}\n`);
  }
}

main().catch((err: unknown) => {
  console.error(`big-store: FAILED: ${(err as Error).stack ?? String(err)}`);
  process.exitCode = 1;
});
