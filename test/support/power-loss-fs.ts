/**
 * An in-memory DurableFs that keeps what was written apart from what is durable, so a test can
 * cut the power at any operation and restart on exactly what a real disk would have kept:
 * - file content survives only as of the file's last datasync/sync;
 * - a directory entry (create, rename, remove) survives only as of its directory's last syncDir;
 * - with `tear`, each file that was only appended to since its last sync also keeps every
 *   unsynced write but the last, and a prefix of that last one (a torn write).
 * Directories made by mkdir are taken as durable at once (the store makes them before any data).
 */
import { dirname } from 'node:path';
import type { DurableFile, DurableFs } from '../../src/cluster-broker/store/durable-fs.js';

export class PowerLostError extends Error {
  constructor(readonly op: string) {
    super(`power lost (at ${op})`);
  }
}

interface Inode {
  data: Uint8Array;
  durable: Uint8Array;
  /** Lengths of the writes since the last sync, or undefined once a truncate broke the append-only run. */
  unsyncedWrites: number[] | undefined;
}

function newInode(): Inode {
  return { data: new Uint8Array(0), durable: new Uint8Array(0), unsyncedWrites: [] };
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
          data = inode.data.slice(0, before + Math.min(last, Math.max(0, tear(last))));
        }
        copy = { data: data.slice(), durable: data.slice(), unsyncedWrites: [] };
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
    if (!inode || offset < 0 || offset >= inode.data.length) return false;
    inode.data[offset]! ^= mask;
    if (offset < inode.durable.length) inode.durable[offset]! ^= mask;
    return true;
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
      inode.durable = inode.data.slice();
      inode.unsyncedWrites = [];
    };
    return {
      write: async (data) => {
        this.step('write', path);
        if (closed) throw new Error('write on a closed file');
        const grown = new Uint8Array(inode.data.length + data.length);
        grown.set(inode.data, 0);
        grown.set(data, inode.data.length);
        inode.data = grown;
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
      inode.data = new Uint8Array(0);
      inode.unsyncedWrites = undefined;
    } else {
      inode = newInode();
      this.live.set(path, inode);
    }
    return this.file(inode, path);
  }

  async readFile(path: string): Promise<Uint8Array> {
    this.step('readFile', path);
    return this.inode(path).data.slice();
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
    const cut = new Uint8Array(length);
    cut.set(inode.data.subarray(0, Math.min(length, inode.data.length)));
    inode.data = cut;
    inode.unsyncedWrites = undefined;
  }

  async copyFile(from: string, to: string): Promise<void> {
    this.step('copyFile', `${from} -> ${to}`);
    const source = this.inode(from);
    this.checkDir(to);
    // a copy's bytes are not durable until synced, like any write
    this.live.set(to, { data: source.data.slice(), durable: new Uint8Array(0), unsyncedWrites: undefined });
  }

  async syncFile(path: string): Promise<void> {
    this.step('syncFile', path);
    const inode = this.inode(path);
    inode.durable = inode.data.slice();
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
