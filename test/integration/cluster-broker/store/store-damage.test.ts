/**
 * A damaged single-node store, met the way an operator meets it: a real `quorate-broker`
 * process on a real data dir. A torn tail is cut with a warning; any other damage (a bad record
 * followed by good ones, a bad segment header, a bad snapshot) stops the broker with the file,
 * the offset and what to do; `--repair` sets the damage aside and serves what is intact.
 */
import { appendFile, cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrokerState } from '../../../../src/cluster-broker/core/broker-state.js';
import { decodeEvent } from '../../../../src/cluster-broker/core/event-codec.js';
import { scanRecords } from '../../../../src/cluster-broker/store/record-format.js';
import { SEGMENT_HEADER_BYTES } from '../../../../src/cluster-broker/store/segment-header.js';
import { segmentName } from '../../../../src/cluster-broker/store/segments.js';
import { writeSnapshotFile } from '../../../../src/cluster-broker/store/snapshot-file.js';
import {
  closeConnection,
  connect,
  sendAll,
  TestReceiver,
} from '../../../cluster-broker/server/rhea-client.js';
import { runBrokerToExit, spawnBroker } from '../../../support/broker-process.js';

const MESSAGES = 6;
const SEGMENT = segmentName(1);

const dirs: string[] = [];
let base: string;
/** Byte offset (in the segment file) of the record of each enqueue, in order. */
let enqueueOffsets: number[];

async function tempDir(name: string): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), `qb-damage-${name}-`));
  dirs.push(d);
  return d;
}

/** A copy of the healthy store to damage. */
async function copyOfBase(name: string): Promise<string> {
  const d = await tempDir(name);
  await cp(base, d, { recursive: true });
  return d;
}

/** Every body in queue `q`, in order: receives until a marker sent now comes back. */
async function queueBodies(port: number): Promise<string[]> {
  const conn = await connect({ port });
  try {
    expect((await sendAll(conn, 'q', [{ body: 'marker', durable: true }]))[0]!.state).toBe('accepted');
    const receiver = new TestReceiver(conn, 'q');
    const bodies: string[] = [];
    for (;;) {
      const [got] = await receiver.next(1, 30_000);
      got!.delivery.accept();
      if (got!.message.body === 'marker') return bodies;
      bodies.push(String(got!.message.body));
    }
  } finally {
    await closeConnection(conn);
  }
}

beforeAll(async () => {
  base = await tempDir('base');
  const b = await spawnBroker(['--port', '0', '--data-dir', base]);
  const conn = await connect({ port: b.port });
  const outcomes = await sendAll(
    conn,
    'q',
    Array.from({ length: MESSAGES }, (_, i) => ({ body: `m-${i}`, durable: true })),
  );
  expect(outcomes.every((o) => o.state === 'accepted')).toBe(true);
  await closeConnection(conn);
  b.child.kill('SIGTERM');
  expect(await b.exited).toBe(0);
  const seg = await readFile(join(base, SEGMENT));
  const body = seg.subarray(SEGMENT_HEADER_BYTES);
  enqueueOffsets = [];
  for (const payload of scanRecords(body).payloads) {
    if (decodeEvent(payload).type === 'enqueue') {
      enqueueOffsets.push(payload.byteOffset - seg.byteOffset - 8);
    }
  }
  expect(enqueueOffsets).toHaveLength(MESSAGES);
}, 120_000);

afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

/** Garbage over 21 bytes inside the 4th message's record: records 5 and 6 stay valid after it. */
async function damageMiddle(dir: string): Promise<number> {
  const path = join(dir, SEGMENT);
  const buf = await readFile(path);
  const at = enqueueOffsets[3]! + 4;
  buf.fill(0xab, at, at + 21);
  await writeFile(path, buf);
  return enqueueOffsets[3]!;
}

describe('a damaged single-node store', () => {
  it('refuses to start on a bad record followed by valid ones, a bad segment header or a bad snapshot', async () => {
    const middle = await copyOfBase('middle');
    const recordAt = await damageMiddle(middle);
    const header = await copyOfBase('header');
    const segBytes = await readFile(join(header, SEGMENT));
    segBytes.fill(0x21, 0, 8);
    await writeFile(join(header, SEGMENT), segBytes);
    const snapshot = await copyOfBase('snapshot');
    await writeSnapshotFile(snapshot, { index: 1, state: new BrokerState().snapshot() });
    const snapBytes = await readFile(join(snapshot, 'snapshot.bin'));
    snapBytes[snapBytes.length - 1]! ^= 0x01;
    await writeFile(join(snapshot, 'snapshot.bin'), snapBytes);

    const [m, h, s] = await Promise.all(
      [middle, header, snapshot].map((d) => runBrokerToExit(['--port', '0', '--data-dir', d])),
    );
    expect(m.code, m.stderr).toBe(1);
    expect(m.stderr).toContain(`${join(middle, SEGMENT)} is damaged at byte ${recordAt}`);
    expect(m.stderr).toContain(`followed by 2 valid one(s) from byte ${enqueueOffsets[4]}: not a torn write`);
    expect(m.stderr).toContain('--repair');
    expect(m.stderr).toContain('restore');
    expect(h.code, h.stderr).toBe(1);
    expect(h.stderr).toContain(`${join(header, SEGMENT)} is damaged at byte 0: bad segment header`);
    expect(s.code, s.stderr).toBe(1);
    expect(s.stderr).toContain(
      `${join(snapshot, 'snapshot.bin')} is damaged at byte 24: snapshot checksum mismatch`,
    );
    expect(s.stderr).toContain('--repair');
    // nothing was cut
    expect((await readFile(join(middle, SEGMENT))).length).toBe((await readFile(join(base, SEGMENT))).length);
  });

  it('cuts a torn tail, says where and how much at warn level, and serves every message', async () => {
    const dir = await copyOfBase('torn');
    // a record cut short: its header promises 1000 bytes, 10 made it to disk
    const torn = Buffer.alloc(18);
    torn.writeUInt32LE(1000, 0);
    torn.fill(0x5a, 8);
    await appendFile(join(dir, SEGMENT), torn);
    const size = (await readFile(join(base, SEGMENT))).length;
    const b = await spawnBroker(['--port', '0', '--data-dir', dir]);
    try {
      expect(await queueBodies(b.port)).toEqual(Array.from({ length: MESSAGES }, (_, i) => `m-${i}`));
      const warning = b.stderr.find((l) => l.includes('cut a torn tail'));
      expect(warning, b.stderr.join('\n')).toBeDefined();
      expect(warning).toMatch(/ WARN /);
      expect(warning).toContain(`"file":"${join(dir, SEGMENT)}"`);
      expect(warning).toContain(`"offset":${size}`);
      expect(warning).toContain('"bytesCut":18');
    } finally {
      b.child.kill('SIGTERM');
      expect(await b.exited).toBe(0);
    }
  });

  it('--repair quarantines the damaged segment, serves the intact messages and logs what it dropped', async () => {
    const dir = await copyOfBase('repair');
    await damageMiddle(dir);
    const original = await readFile(join(dir, SEGMENT));
    const b = await spawnBroker(['--port', '0', '--data-dir', dir, '--repair']);
    try {
      expect(await queueBodies(b.port)).toEqual(['m-0', 'm-1', 'm-2']);
      const report = b.stderr.find((l) => l.includes('store repaired'));
      expect(report, b.stderr.join('\n')).toBeDefined();
      // the damaged record and the two valid ones after it
      expect(report).toContain('dropped 3 log record(s)');
      const stamps = await readdir(join(dir, 'quarantine'));
      expect(stamps).toHaveLength(1);
      expect(stamps[0]).toMatch(/^\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}Z$/);
      const kept = await readFile(join(dir, 'quarantine', stamps[0]!, SEGMENT));
      expect(kept.equals(original)).toBe(true);
    } finally {
      b.child.kill('SIGTERM');
      expect(await b.exited).toBe(0);
    }
    // repaired for good: a plain restart needs no --repair and sees the same messages (consumed above)
    const again = await spawnBroker(['--port', '0', '--data-dir', dir]);
    try {
      expect(await queueBodies(again.port)).toEqual([]);
    } finally {
      again.child.kill('SIGTERM');
      expect(await again.exited).toBe(0);
    }
  });
});
