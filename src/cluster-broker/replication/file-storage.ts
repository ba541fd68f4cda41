/**
 * Durable storage of one member in a directory:
 *   meta.json  cluster id, member id, term, vote, recovering, crc; replaced atomically (temp,
 *              fsync, rename, fsync dir)
 *   snapshot   crc-checked snapshot (index, term, data); replaced atomically the same way
 *   log        append-only CRC-checked records (log-records.ts); a torn tail is cut on recovery;
 *              compaction rewrites it (temp + rename) starting with a base record = the snapshot
 *
 * Damage (a corrupt log record, meta.json or snapshot) is never cut silently: every file of the
 * store is moved to `quarantineDir/<time>/`, the intact part is written back, and the member
 * starts recovering (HardState.recovering = 'damaged'): it may have lost votes it cast or entries
 * it acknowledged, so it takes no part in votes or commits until it has caught up from a leader
 * (raft/recovery.ts). A store that does not exist yet starts as 'blank' (docs/production.md).
 *
 * `persist(ops)` makes one Ready's writes durable: the snapshot (if any) first, then the log
 * records in ONE write and ONE fdatasync (group commit: every entry the core batched into the
 * Ready), then the metadata. With `groupCommit: false` every entry gets its own write + fsync
 * (for comparison in the benchmark).
 *
 * Every file operation goes through a `DurableFs` (../files/durable-fs.ts), whose contract says
 * what survives a power loss: a file's bytes after its sync, a directory entry after the
 * directory's sync. Tests run this storage on a model that drops everything else.
 *
 * The options and the damage report are in file-storage-types.ts, `meta.json`'s encoding in
 * file-storage-meta.ts, the snapshot file's in file-storage-snapshot.ts, and the reads of missing
 * or large files in file-storage-reads.ts.
 */
import path from 'node:path';
import { type DurableFile, type DurableFs, nodeDurableFs, writeFileAtomic } from '../files/durable-fs.js';
import { LatencyHistogram } from '../files/latency-histogram.js';
import { ReplicationError } from './errors.js';
import { decodeMeta, encodeMeta, type Meta } from './file-storage-meta.js';
import { isMissing, readChunkedIfExists, readIfExists } from './file-storage-reads.js';
import { encodeSnapshot, readSnapshot } from './file-storage-snapshot.js';
import type { FileStorageOptions, StoreDamage } from './file-storage-types.js';
import {
  assertEntryFits,
  baseRecord,
  entryRecord,
  entryRecordSize,
  type ParsedLog,
  readLog,
  truncateRecord,
  writeEntryRecord,
} from './log-records.js';
import type { HardState, InitialState, PersistOps, Snapshot } from './raft/types.js';
import { StoreImage } from './store-image.js';

export type { FileStorageOptions, StoreDamage } from './file-storage-types.js';

const STORE_FILES = ['meta.json', 'snapshot', 'log'] as const;

/** The largest record buffer a store keeps between Readies (a bigger Ready gets one of its own). */
const STAGING_KEPT = 8 * 1024 * 1024;

export class FileStorage {
  private readonly logPath: string;
  private readonly metaPath: string;
  private readonly snapPath: string;
  private fh!: DurableFile;
  private readonly fs: DurableFs;
  private readonly image = new StoreImage();
  private initial!: InitialState;
  private meta!: Meta;
  private readonly groupCommit: boolean;
  /** fsyncs and bytes written, for benchmarks and tests. */
  readonly stats = { fsyncs: 0, writes: 0, bytes: 0 };
  /** Durations of the log's fsyncs (monitoring). */
  readonly fsyncLatency = new LatencyHistogram();
  /** Bytes cut from a torn log tail at recovery. */
  truncatedBytes = 0;
  /** Set when recovery found corruption and quarantined the store's files. */
  damage: StoreDamage | undefined;
  /** Where persist() builds a Ready's log records (stagingFor). */
  private staging = Buffer.allocUnsafeSlow(0);

  private constructor(private readonly opts: FileStorageOptions) {
    this.logPath = path.join(opts.dir, 'log');
    this.metaPath = path.join(opts.dir, 'meta.json');
    this.snapPath = path.join(opts.dir, 'snapshot');
    this.groupCommit = opts.groupCommit ?? true;
    this.fs = opts.fs ?? nodeDurableFs;
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
    const truncate = p.truncateFrom === undefined ? undefined : truncateRecord(p.truncateFrom);
    if (p.truncateFrom !== undefined) this.image.apply({ kind: 'truncate', from: p.truncateFrom });
    let size = truncate ? truncate.length : 0;
    // indexed loops: a for-of in this async function made an iterator result per entry
    const entries = p.entries;
    for (let k = 0; k < entries.length; k++) {
      const e = entries[k]!;
      assertEntryFits(e.data); // refused at propose; the last word before a record is written
      size += entryRecordSize(e);
    }
    if (size > 0) {
      // the records are built back to back in one buffer kept from Ready to Ready (a fresh
      // buffer per record, then their concatenation, showed in a follower's profiles)
      const out = this.stagingFor(size);
      let at = 0;
      // where each record ends, only for one write per record (groupCommit off)
      const ends: number[] | undefined = this.groupCommit ? undefined : [];
      if (truncate) {
        out.set(truncate, 0);
        at = truncate.length;
        ends?.push(at);
      }
      for (let k = 0; k < entries.length; k++) {
        at = writeEntryRecord(out, at, entries[k]!);
        ends?.push(at);
      }
      if (ends === undefined) {
        await this.append(out.subarray(0, at));
      } else {
        let from = 0;
        for (const end of ends) {
          await this.append(out.subarray(from, end));
          from = end;
        }
      }
    }
    for (let k = 0; k < entries.length; k++) this.image.appendEntry(entries[k]!);
    if (p.hardState) await this.writeMeta(p.hardState);
  }

  async close(): Promise<void> {
    await this.fh.close();
  }

  /**
   * A buffer of at least `size` bytes for one Ready's records. Reused: persist() runs one Ready at
   * a time and its write completes before it returns. One larger than STAGING_KEPT is not kept.
   */
  private stagingFor(size: number): Buffer {
    if (size <= this.staging.length) return this.staging;
    const grown = Buffer.allocUnsafeSlow(
      Math.max(size, Math.min(2 * this.staging.length, STAGING_KEPT), 64 * 1024),
    );
    if (grown.length <= STAGING_KEPT) this.staging = grown;
    return grown;
  }

  /** One write of the records and one fdatasync. */
  private async append(data: Uint8Array): Promise<void> {
    const bytes = data.length;
    await this.fh.write(data);
    await this.fsyncLatency.time(() => this.fh.datasync());
    this.stats.writes++;
    this.stats.fsyncs++;
    this.stats.bytes += bytes;
  }

  private async writeMeta(hs: HardState): Promise<void> {
    const { recovering: _r, ...rest } = this.meta;
    this.meta = {
      ...rest,
      term: hs.term,
      vote: hs.vote,
      ...(hs.recovering ? { recovering: hs.recovering } : {}),
    };
    await writeFileAtomic(this.fs, this.metaPath, [encodeMeta(this.meta)]);
    this.stats.fsyncs += 2;
  }

  private async writeSnapshot(s: Snapshot): Promise<void> {
    await writeFileAtomic(this.fs, this.snapPath, encodeSnapshot(s));
    this.image.apply({ kind: 'snapshot', snapshot: s });
    this.image.apply({ kind: 'rewrite', base: { index: s.index, term: s.term } });
    await this.rewriteLog();
  }

  /** Replace the log file by base record + the image's entries (compaction). */
  private async rewriteLog(): Promise<void> {
    const parts = [baseRecord(this.image.base.index, this.image.base.term)];
    for (const e of this.image.entries) parts.push(entryRecord(e));
    if (this.fh) await this.fh.close();
    await writeFileAtomic(this.fs, this.logPath, parts);
    this.fh = await this.fs.openAppend(this.logPath);
    this.stats.fsyncs += 2;
  }

  private async recover(): Promise<void> {
    const { dir, clusterId, memberId } = this.opts;
    const log = this.opts.logger;
    const fs = this.fs;
    await fs.mkdir(dir);
    const damaged: { file: StoreDamage['file']; offset?: number; reason: string }[] = [];
    const metaBuf = await readIfExists(fs, this.metaPath);
    const snapRead = await readChunkedIfExists(fs, this.snapPath, (r) => readSnapshot(r, this.snapPath));
    const logFound = await readChunkedIfExists(fs, this.logPath, async (r) => ({
      size: r.size,
      parsed: await readLog(r),
    }));
    const logSize = logFound?.size ?? 0;
    const parsed: ParsedLog = logFound?.parsed ?? { ops: [], validLength: 0 };
    const blank = metaBuf === undefined && snapRead === undefined && logSize === 0;

    let meta: Meta | undefined;
    if (metaBuf) {
      const m = decodeMeta(metaBuf);
      if (typeof m === 'string') damaged.push({ file: 'meta.json', reason: m });
      else meta = m;
    } else if (!blank) {
      damaged.push({ file: 'meta.json', reason: 'missing next to a log or snapshot' });
    }
    if (meta && (meta.clusterId !== clusterId || meta.memberId !== memberId)) {
      throw new ReplicationError(
        'amqp:internal-error',
        `store in ${dir} belongs to member ${meta.memberId} of cluster ${meta.clusterId}`,
      );
    }
    let snapOk = true;
    if (snapRead !== undefined) {
      const snap = snapRead;
      if (typeof snap === 'string') {
        damaged.push({ file: 'snapshot', reason: snap });
        snapOk = false;
      } else {
        this.image.apply({ kind: 'snapshot', snapshot: snap });
      }
    }
    let validLength = parsed.validLength;
    if (parsed.damage?.kind === 'corrupt') {
      damaged.push({ file: 'log', offset: parsed.damage.offset, reason: parsed.damage.reason });
    }
    for (const op of parsed.ops) {
      try {
        this.image.apply(op);
      } catch (err) {
        damaged.push({ file: 'log', reason: (err as Error).message });
        break;
      }
    }
    // a file gone from a store that had it is a loss like any damage (docs/production.md#damaged-cluster-member):
    // the log is created with the store and never removed; a base past 0 names a snapshot
    if (meta && meta.recovering !== 'blank' && logFound === undefined)
      damaged.push({ file: 'log', reason: 'missing next to meta.json' });
    if (snapOk && this.image.base.index > 0 && this.image.snapshot === undefined) {
      damaged.push({
        file: 'snapshot',
        reason: `missing, the log starts after index ${this.image.base.index}`,
      });
      snapOk = false;
    }
    if (!snapOk) {
      // the log after a compaction starts at the lost snapshot: nothing of it can be applied
      this.image.base = { index: 0, term: 0 };
      this.image.entries = [];
    }

    if (damaged.length > 0) {
      const lastTerm = Math.max(
        this.image.snapshot?.term ?? 0,
        this.image.termAt(this.image.lastIndex()) ?? 0,
      );
      this.meta = meta
        ? { ...meta, recovering: 'damaged' }
        : { clusterId, memberId, term: lastTerm, vote: null, recovering: 'damaged' };
      const to = await this.quarantine();
      this.damage = { ...damaged[0]!, quarantinedTo: to };
      if (this.image.snapshot)
        await writeFileAtomic(this.fs, this.snapPath, encodeSnapshot(this.image.snapshot));
      this.image.recover();
      await this.rewriteLog();
      await writeFileAtomic(this.fs, this.metaPath, [encodeMeta(this.meta)]);
      log?.error?.(
        {
          dir,
          damaged,
          quarantinedTo: to,
          keptSnapshot: this.image.snapshot?.index ?? null,
          keptLastIndex: this.image.lastIndex(),
          term: this.meta.term,
        },
        'replication: store damaged; its files were moved to quarantine and the member rejoins as recovering (no votes, its acknowledgements do not count) until it has caught up from the leader',
      );
      validLength = -1;
    } else if (meta) {
      this.meta = meta;
    } else {
      this.meta = { clusterId, memberId, term: 0, vote: null, recovering: 'blank' };
      await writeFileAtomic(this.fs, this.metaPath, [encodeMeta(this.meta)]);
      log?.info?.(
        { dir },
        'replication: new store; the member neither votes nor stands until a leader has caught it up, or every member says it is blank (a new cluster): it cannot tell a new member from an emptied data dir',
      );
    }
    this.image.hardState = {
      term: this.meta.term,
      vote: this.meta.vote,
      ...(this.meta.recovering ? { recovering: this.meta.recovering } : {}),
    };
    if (validLength >= 0) {
      if (validLength < logSize) {
        this.truncatedBytes = logSize - validLength;
        log?.warn?.(
          { file: this.logPath, offset: validLength, bytes: this.truncatedBytes },
          'replication: cut a torn log tail (an append interrupted by a crash)',
        );
        await fs.truncate(this.logPath, validLength);
        await fs.syncFile(this.logPath);
      }
      this.fh = await fs.openAppend(this.logPath);
      // a new log's name must be durable before its first records are reported durable
      // (their fdatasync covers the file's bytes, not its directory entry)
      if (logFound === undefined) await fs.syncDir(dir);
      if (this.image.recover()) await this.rewriteLog();
    }
    if (damaged.length === 0 && meta?.recovering) {
      log?.warn?.(
        { dir, recovering: this.meta.recovering },
        'replication: still recovering from an earlier start; no votes until caught up from the leader',
      );
    }
    this.initial = this.image.toInitialState();
  }

  /** Move every file of the store into a fresh `<quarantine>/<time>/` directory; returns it. */
  private async quarantine(): Promise<string> {
    const root = this.opts.quarantineDir ?? path.join(this.opts.dir, 'quarantine');
    const to = path.join(root, new Date().toISOString().replace(/[:.]/g, '-'));
    await this.fs.mkdir(to);
    for (const f of STORE_FILES) {
      await this.fs.rename(path.join(this.opts.dir, f), path.join(to, f)).catch((err: unknown) => {
        if (!isMissing(err)) throw err;
      });
    }
    // the moves are durable once every directory entry they made or removed is
    await this.fs.syncDir(to);
    await this.fs.syncDir(root);
    await this.fs.syncDir(this.opts.dir);
    return to;
  }
}
