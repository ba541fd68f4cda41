/**
 * Durable storage of one member in a directory:
 *   meta.json  cluster id, member id, term, vote; replaced atomically (temp, fsync, rename, fsync dir)
 *   snapshot   crc-checked snapshot (index, term, data); replaced atomically the same way
 *   log        append-only CRC-checked records (log-records.ts); a torn tail is cut on recovery;
 *              compaction rewrites it (temp + rename) starting with a base record = the snapshot
 *
 * `persist(ops)` makes one Ready's writes durable: the snapshot (if any) first, then the log
 * records in ONE write and ONE fdatasync (group commit: every entry the core batched into the
 * Ready), then the metadata. With `groupCommit: false` every entry gets its own write + fsync
 * (for comparison in the benchmark).
 */
import { type FileHandle, mkdir, open, readFile, rename } from 'node:fs/promises';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import { LatencyHistogram } from '../store/latency-histogram.js';
import { ReplicationError } from './errors.js';
import { baseRecord, entryRecord, parseLog, truncateRecord } from './log-records.js';
import type { Logger } from './logger.js';
import { StoreImage } from './store-image.js';
import type { HardState, InitialState, PersistOps, Snapshot } from './types.js';

export interface FileStorageOptions {
  readonly dir: string;
  readonly clusterId: string;
  readonly memberId: string;
  /** Default true. */
  readonly groupCommit?: boolean;
  readonly logger?: Logger;
}

interface Meta {
  clusterId: string;
  memberId: string;
  term: number;
  vote: string | null;
}

async function fsyncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** Write `data` to `file` atomically and durably. */
async function writeAtomic(file: string, data: Uint8Array): Promise<void> {
  const tmp = `${file}.tmp`;
  const fh = await open(tmp, 'w');
  try {
    await fh.writeFile(data);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, file);
  await fsyncDir(path.dirname(file));
}

async function readIfExists(file: string): Promise<Buffer | undefined> {
  try {
    return await readFile(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

function encodeSnapshot(s: Snapshot): Buffer {
  const body = Buffer.allocUnsafe(16 + s.data.length);
  body.writeDoubleBE(s.index, 0);
  body.writeDoubleBE(s.term, 8);
  body.set(s.data, 16);
  const out = Buffer.allocUnsafe(4 + body.length);
  out.writeUInt32BE(crc32(body), 0);
  body.copy(out, 4);
  return out;
}

function decodeSnapshot(b: Buffer): Snapshot {
  const body = b.subarray(4);
  if (b.length < 20 || crc32(body) !== b.readUInt32BE(0)) {
    throw new ReplicationError('amqp:internal-error', 'snapshot file is corrupt');
  }
  return { index: body.readDoubleBE(0), term: body.readDoubleBE(8), data: new Uint8Array(body.subarray(16)) };
}

export class FileStorage {
  private readonly logPath: string;
  private readonly metaPath: string;
  private readonly snapPath: string;
  private fh!: FileHandle;
  private readonly image = new StoreImage();
  private initial!: InitialState;
  private meta!: Meta;
  private readonly groupCommit: boolean;
  /** fsyncs and bytes written, for benchmarks and tests. */
  readonly stats = { fsyncs: 0, writes: 0, bytes: 0 };
  /** Durations of the log's fsyncs (monitoring). */
  readonly fsyncLatency = new LatencyHistogram();
  /** Bytes cut from a torn/corrupt log tail at recovery. */
  truncatedBytes = 0;

  private constructor(private readonly opts: FileStorageOptions) {
    this.logPath = path.join(opts.dir, 'log');
    this.metaPath = path.join(opts.dir, 'meta.json');
    this.snapPath = path.join(opts.dir, 'snapshot');
    this.groupCommit = opts.groupCommit ?? true;
  }

  /** Open (creating if needed) and recover the store in `dir`. */
  static async open(opts: FileStorageOptions): Promise<FileStorage> {
    const s = new FileStorage(opts);
    await s.recover();
    return s;
  }

  /** The state recovered at open, for `new RaftCore(config, storage.initialState(), now)`. */
  initialState(): InitialState {
    return this.initial;
  }

  get clusterId(): string {
    return this.meta.clusterId;
  }

  /** Make one Ready's writes durable; resolves after the fsyncs. Call strictly in Ready order. */
  async persist(p: PersistOps): Promise<void> {
    if (p.snapshot) await this.writeSnapshot(p.snapshot);
    const records: Buffer[] = [];
    if (p.truncateFrom !== undefined) {
      records.push(truncateRecord(p.truncateFrom));
      this.image.apply({ kind: 'truncate', from: p.truncateFrom });
    }
    for (const e of p.entries) records.push(entryRecord(e));
    if (this.groupCommit) {
      if (records.length > 0) await this.append(records);
    } else {
      for (const r of records) await this.append([r]);
    }
    for (const e of p.entries) this.image.apply({ kind: 'entry', entry: e });
    if (p.hardState) await this.writeMeta(p.hardState);
  }

  async close(): Promise<void> {
    await this.fh.close();
  }

  /** One gathered write (writev, no concatenation copy) and one fdatasync. */
  private async append(bufs: Buffer[]): Promise<void> {
    let bytes = 0;
    for (const b of bufs) bytes += b.length;
    // writev takes at most IOV_MAX (1024) buffers per call
    for (let i = 0; i < bufs.length; i += 1024) {
      const part = bufs.slice(i, i + 1024);
      const { bytesWritten } = await this.fh.writev(part);
      let expect = 0;
      for (const b of part) expect += b.length;
      if (bytesWritten !== expect) await this.fh.write(Buffer.concat(part).subarray(bytesWritten));
    }
    await this.fsyncLatency.time(() => this.fh.datasync());
    this.stats.writes++;
    this.stats.fsyncs++;
    this.stats.bytes += bytes;
  }

  private async writeMeta(hs: HardState): Promise<void> {
    this.meta = { ...this.meta, term: hs.term, vote: hs.vote };
    await writeAtomic(this.metaPath, Buffer.from(JSON.stringify(this.meta)));
    this.stats.fsyncs += 2;
  }

  private async writeSnapshot(s: Snapshot): Promise<void> {
    await writeAtomic(this.snapPath, encodeSnapshot(s));
    this.image.apply({ kind: 'snapshot', snapshot: s });
    this.image.apply({ kind: 'rewrite', base: { index: s.index, term: s.term } });
    await this.rewriteLog();
  }

  /** Replace the log file by base record + the image's entries (compaction). */
  private async rewriteLog(): Promise<void> {
    const parts = [baseRecord(this.image.base.index, this.image.base.term)];
    for (const e of this.image.entries) parts.push(entryRecord(e));
    if (this.fh) await this.fh.close();
    await writeAtomic(this.logPath, Buffer.concat(parts));
    this.fh = await open(this.logPath, 'a');
    this.stats.fsyncs += 2;
  }

  private async recover(): Promise<void> {
    const { dir, clusterId, memberId } = this.opts;
    await mkdir(dir, { recursive: true });
    const metaBuf = await readIfExists(this.metaPath);
    if (metaBuf) {
      this.meta = JSON.parse(metaBuf.toString('utf8')) as Meta;
      if (this.meta.clusterId !== clusterId || this.meta.memberId !== memberId) {
        throw new ReplicationError(
          'amqp:internal-error',
          `store in ${dir} belongs to member ${this.meta.memberId} of cluster ${this.meta.clusterId}`,
        );
      }
    } else {
      this.meta = { clusterId, memberId, term: 0, vote: null };
      await writeAtomic(this.metaPath, Buffer.from(JSON.stringify(this.meta)));
    }
    this.image.hardState = { term: this.meta.term, vote: this.meta.vote };
    const snapBuf = await readIfExists(this.snapPath);
    if (snapBuf) this.image.apply({ kind: 'snapshot', snapshot: decodeSnapshot(snapBuf) });
    const logBuf = (await readIfExists(this.logPath)) ?? Buffer.alloc(0);
    const { ops, validLength } = parseLog(logBuf);
    for (const op of ops) this.image.apply(op);
    this.fh = await open(this.logPath, 'a');
    if (validLength < logBuf.length) {
      this.truncatedBytes = logBuf.length - validLength;
      this.opts.logger?.warn?.({ dir, bytes: this.truncatedBytes }, 'replication: cut a torn log tail');
      await this.fh.truncate(validLength);
      await this.fh.sync();
    }
    if (this.image.recover()) await this.rewriteLog();
    this.initial = this.image.toInitialState();
  }
}
