/**
 * An in-memory DurableFs that keeps what was written apart from what is durable, so a test can
 * cut the power at any operation and restart on exactly what a real disk would have kept:
 * - file content survives only as of the file's last datasync/sync;
 * - a directory entry (create, rename, remove) survives only as of its directory's last syncDir;
 * - with `tear`, each file that was only appended to since its last sync also keeps every
 *   unsynced write but the last, and a prefix of that last one (a torn write).
 * Directories made by mkdir are taken as durable at once (the store makes them before any data).
 *
 * A file may also be placed whole (`placeRepeated`) as runs of one repeated unit, so a test can
 * hold a store file past 2 GiB without that much memory: `readFile` of a file past 2 GiB then
 * fails as node's does, and `openRead` serves it in pieces, as a real disk would.
 */
import { dirname } from 'node:path';
import type { DurableFile, DurableFs, ReadableFile } from '../../src/cluster-broker/files/durable-fs.js';

export class PowerLostError extends Error {
  constructor(readonly op: string) {
    super(`power lost (at ${op})`);
  }
}

/** `unit` repeated `times` times. */
export interface RepeatedRun {
  readonly unit: Uint8Array;
  readonly times: number;
}

/** What node's readFile refuses (fs.readFile: 'File size (N) is greater than 2 GiB'). */
const READ_FILE_MAX = 2 ** 31 - 1;

/**
 * A file's bytes: runs of a repeated unit (files placed past 2 GiB) then plain bytes. Runs are
 * never written in place: a write appends to `tail`, a cut into the runs drops the tail.
 */
class FileBytes {
  constructor(
    readonly runs: readonly RepeatedRun[] = [],
    readonly tail: Uint8Array = new Uint8Array(0),
  ) {}

  get runBytes(): number {
    let n = 0;
    for (const r of this.runs) n += r.unit.length * r.times;
    return n;
  }

  get length(): number {
    return this.runBytes + this.tail.length;
  }

  append(data: Uint8Array): FileBytes {
    const grown = new Uint8Array(this.tail.length + data.length);
    grown.set(this.tail, 0);
    grown.set(data, this.tail.length);
    return new FileBytes(this.runs, grown);
  }

  /** The first `length` bytes (zero bytes added past the end, as truncate does). */
  cut(length: number): FileBytes {
    const inRuns = this.runBytes;
    if (length >= inRuns) {
      const tail = new Uint8Array(length - inRuns);
      tail.set(this.tail.subarray(0, Math.min(tail.length, this.tail.length)));
      return new FileBytes(this.runs, tail);
    }
    const runs: RepeatedRun[] = [];
    let left = length;
    let tail = new Uint8Array(0);
    for (const r of this.runs) {
      if (left <= 0) break;
      const whole = Math.min(r.times, Math.floor(left / r.unit.length));
      if (whole > 0) runs.push({ unit: r.unit, times: whole });
      left -= whole * r.unit.length;
      if (whole < r.times && left > 0) {
        tail = r.unit.slice(0, left);
        left = 0;
      }
    }
    return new FileBytes(runs, tail);
  }

  /** A copy of `length` bytes from `pos` (clamped to the end). */
  read(pos: number, length: number): Uint8Array {
    const end = Math.min(pos + length, this.length);
    const out = new Uint8Array(Math.max(0, end - pos));
    let at = 0; // file offset of the current run's start
    for (const r of this.runs) {
      const runEnd = at + r.unit.length * r.times;
      for (let p = Math.max(pos, at); p < Math.min(end, runEnd); ) {
        const inUnit = (p - at) % r.unit.length;
        const n = Math.min(r.unit.length - inUnit, end - p);
        out.set(r.unit.subarray(inUnit, inUnit + n), p - pos);
        p += n;
      }
      at = runEnd;
    }
    if (end > at) out.set(this.tail.subarray(Math.max(0, pos - at), end - at), Math.max(0, at - pos));
    return out;
  }

  /** The whole file in one buffer, as node's readFile (which refuses a file past 2 GiB). */
  whole(path: string): Uint8Array {
    if (this.length > READ_FILE_MAX) {
      const err: NodeJS.ErrnoException = new RangeError(
        `File size (${this.length}) is greater than 2 GiB (${path})`,
      );
      err.code = 'ERR_FS_FILE_TOO_LARGE';
      throw err;
    }
    return this.runs.length === 0 ? this.tail.slice() : this.read(0, this.length);
  }

  copy(): FileBytes {
    return new FileBytes(this.runs, this.tail.slice());
  }
}

interface Inode {
  data: FileBytes;
  durable: FileBytes;
  /** Lengths of the writes since the last sync, or undefined once a truncate broke the append-only run. */
  unsyncedWrites: number[] | undefined;
}

function newInode(): Inode {
  return { data: new FileBytes(), durable: new FileBytes(), unsyncedWrites: [] };
}

function enoent(path: string): NodeJS.ErrnoException {
  const err: NodeJS.ErrnoException = new Error(`ENOENT: no such file or directory, '${path}'`);
  err.code = 'ENOENT';
  return err;
}

export interface PowerLossOptions {
  /** Cut the power when the n-th operation (1-based) starts: it and every later one fail. */
  crashAtOp?: number;
}

export class PowerLossFs implements DurableFs {
  /** Operations started so far, and their names (`op path`) in order. */
  readonly ops: string[] = [];
  private dead = false;
  private readonly dirs = new Set<string>();
  private readonly live = new Map<string, Inode>();
  private readonly durableEntries = new Map<string, Inode>();

  constructor(private readonly opts: PowerLossOptions = {}) {}

  get powerLost(): boolean {
    return this.dead;
  }

  /** Cut the power now (later operations fail). */
  cutPower(): void {
    this.dead = true;
  }

  /**
   * A fresh file system holding what survived the power loss. `tear(unsyncedBytes)` picks how
   * many bytes of a file's last unsynced write survive (0..length); without it nothing unsynced does.
   * `opts` set up the next power loss.
   */
  survivor(tear?: (lastWriteBytes: number) => number, opts: PowerLossOptions = {}): PowerLossFs {
    const next = new PowerLossFs(opts);
    for (const d of this.dirs) next.dirs.add(d);
    const copies = new Map<Inode, Inode>();
    for (const [path, inode] of this.durableEntries) {
      let copy = copies.get(inode);
      if (!copy) {
        let data = inode.durable;
        const writes = inode.unsyncedWrites;
        if (tear && writes && writes.length > 0) {
          const last = writes[writes.length - 1]!;
          const before = inode.data.length - last;
          data = inode.data.cut(before + Math.min(last, Math.max(0, tear(last))));
        }
        copy = { data: data.copy(), durable: data.copy(), unsyncedWrites: [] };
        copies.set(inode, copy);
      }
      next.live.set(path, copy);
      next.durableEntries.set(path, copy);
    }
    return next;
  }

  /**
   * Flips the bits of `mask` in byte `offset` of a file, in what is durable too: a bad disk's
   * damage to a stopped member's store (no operation counted). False when there is no such byte.
   */
  flipByte(path: string, offset: number, mask: number): boolean {
    const inode = this.live.get(path);
    // bytes in repeated runs are shared between files: only plain bytes are flipped
    if (!inode || offset < inode.data.runBytes || offset >= inode.data.length) return false;
    inode.data.tail[offset - inode.data.runBytes]! ^= mask;
    if (offset >= inode.durable.runBytes && offset < inode.durable.length)
      inode.durable.tail[offset - inode.durable.runBytes]! ^= mask;
    return true;
  }

  /**
   * Places a durable file at `path` (its directory made by mkdir) holding `runs` then `tail`, as
   * if written and synced: a store file of any size (past 2 GiB) in little memory.
   */
  placeRepeated(path: string, runs: readonly RepeatedRun[], tail: Uint8Array = new Uint8Array(0)): void {
    this.checkDir(path);
    const bytes = new FileBytes(runs, tail.slice());
    const inode: Inode = { data: bytes, durable: bytes.copy(), unsyncedWrites: [] };
    this.live.set(path, inode);
    this.durableEntries.set(path, inode);
  }

  /** A file's size (no operation counted), or undefined when it is missing. */
  sizeOf(path: string): number | undefined {
    return this.live.get(path)?.data.length;
  }

  private step(op: string, path: string): void {
    if (this.dead) throw new PowerLostError(`${op} ${path} (after the power loss)`);
    this.ops.push(`${op} ${path}`);
    if (this.ops.length === this.opts.crashAtOp) {
      this.dead = true;
      throw new PowerLostError(`${op} ${path}`);
    }
  }

  private inode(path: string): Inode {
    const inode = this.live.get(path);
    if (!inode) throw enoent(path);
    return inode;
  }

  private checkDir(path: string): void {
    if (!this.dirs.has(dirname(path))) throw enoent(dirname(path));
  }

  private file(inode: Inode, path: string): DurableFile {
    let closed = false;
    const sync = async (op: string) => {
      this.step(op, path);
      if (closed) throw new Error(`${op} on a closed file`);
      inode.durable = inode.data.copy();
      inode.unsyncedWrites = [];
    };
    return {
      write: async (data) => {
        this.step('write', path);
        if (closed) throw new Error('write on a closed file');
        inode.data = inode.data.append(data);
        inode.unsyncedWrites?.push(data.length);
      },
      datasync: () => sync('datasync'),
      sync: () => sync('sync'),
      close: async () => {
        // closing flushes nothing to the disk; it never fails in this model
        closed = true;
      },
    };
  }

  async mkdir(dir: string): Promise<void> {
    this.step('mkdir', dir);
    for (let d = dir; !this.dirs.has(d) && d !== dirname(d); d = dirname(d)) this.dirs.add(d);
  }

  async openAppend(path: string): Promise<DurableFile> {
    this.step('openAppend', path);
    this.checkDir(path);
    let inode = this.live.get(path);
    if (!inode) {
      inode = newInode();
      this.live.set(path, inode);
    }
    return this.file(inode, path);
  }

  async create(path: string): Promise<DurableFile> {
    this.step('create', path);
    this.checkDir(path);
    let inode = this.live.get(path);
    if (inode) {
      inode.data = new FileBytes();
      inode.unsyncedWrites = undefined;
    } else {
      inode = newInode();
      this.live.set(path, inode);
    }
    return this.file(inode, path);
  }

  async readFile(path: string): Promise<Uint8Array> {
    this.step('readFile', path);
    return this.inode(path).data.whole(path);
  }

  async openRead(path: string): Promise<ReadableFile> {
    this.step('openRead', path);
    // what was open keeps its content (as an open descriptor does, whatever happens to the name)
    const bytes = this.inode(path).data;
    return {
      size: bytes.length,
      read: async (position, length) => {
        if (this.dead) throw new PowerLostError(`read ${path} (after the power loss)`);
        return bytes.read(position, length);
      },
      close: async () => {},
    };
  }

  async readdir(dir: string): Promise<string[]> {
    this.step('readdir', dir);
    if (!this.dirs.has(dir)) throw enoent(dir);
    const names: string[] = [];
    for (const path of this.live.keys()) if (dirname(path) === dir) names.push(path.slice(dir.length + 1));
    for (const d of this.dirs) if (d !== dir && dirname(d) === dir) names.push(d.slice(dir.length + 1));
    return names;
  }

  async rename(from: string, to: string): Promise<void> {
    this.step('rename', `${from} -> ${to}`);
    const inode = this.inode(from);
    this.checkDir(to);
    this.live.delete(from);
    this.live.set(to, inode);
  }

  async remove(path: string): Promise<void> {
    this.step('remove', path);
    this.live.delete(path);
  }

  async truncate(path: string, length: number): Promise<void> {
    this.step('truncate', path);
    const inode = this.inode(path);
    inode.data = inode.data.cut(length);
    inode.unsyncedWrites = undefined;
  }

  async copyFile(from: string, to: string): Promise<void> {
    this.step('copyFile', `${from} -> ${to}`);
    const source = this.inode(from);
    this.checkDir(to);
    // a copy's bytes are not durable until synced, like any write
    this.live.set(to, { data: source.data.copy(), durable: new FileBytes(), unsyncedWrites: undefined });
  }

  async syncFile(path: string): Promise<void> {
    this.step('syncFile', path);
    const inode = this.inode(path);
    inode.durable = inode.data.copy();
    inode.unsyncedWrites = [];
  }

  async syncDir(dir: string): Promise<void> {
    this.step('syncDir', dir);
    if (!this.dirs.has(dir)) throw enoent(dir);
    for (const path of [...this.durableEntries.keys()]) {
      if (dirname(path) === dir && !this.live.has(path)) this.durableEntries.delete(path);
    }
    for (const [path, inode] of this.live) if (dirname(path) === dir) this.durableEntries.set(path, inode);
  }
}
