/**
 * A DurableFs for the simulation: every operation goes to a power-loss model (test/support/
 * power-loss-fs.ts: only synced bytes and directory entries survive a crash, the last unsynced
 * append may survive torn), and every sync completes only when the simulation says so, at a
 * simulated time. A member that crashes while a sync is pending never sees it complete.
 *
 * `onWrite` sees every write before it lands (the simulation reads the log records the real
 * FileStorage writes, for its log-matching check).
 */
import type {
  DurableFile,
  DurableFs,
  ReadableFile,
} from '../../../../src/cluster-broker/files/durable-fs.js';

export class SlowSyncFs implements DurableFs {
  constructor(
    private readonly inner: DurableFs,
    /** Resolves when the sync that starts now has completed. */
    private readonly syncDone: () => Promise<void>,
    private readonly onWrite: (path: string, data: Uint8Array) => void,
  ) {}

  mkdir(dir: string): Promise<void> {
    return this.inner.mkdir(dir);
  }
  async openAppend(path: string): Promise<DurableFile> {
    return this.file(path, await this.inner.openAppend(path));
  }
  async create(path: string): Promise<DurableFile> {
    return this.file(path, await this.inner.create(path));
  }
  readFile(path: string): Promise<Uint8Array> {
    return this.inner.readFile(path);
  }
  openRead(path: string): Promise<ReadableFile> {
    return this.inner.openRead(path);
  }
  readdir(dir: string): Promise<string[]> {
    return this.inner.readdir(dir);
  }
  rename(from: string, to: string): Promise<void> {
    return this.inner.rename(from, to);
  }
  remove(path: string): Promise<void> {
    return this.inner.remove(path);
  }
  truncate(path: string, length: number): Promise<void> {
    return this.inner.truncate(path, length);
  }
  copyFile(from: string, to: string): Promise<void> {
    return this.inner.copyFile(from, to);
  }
  async syncFile(path: string): Promise<void> {
    await this.syncDone();
    await this.inner.syncFile(path);
  }
  async syncDir(dir: string): Promise<void> {
    await this.syncDone();
    await this.inner.syncDir(dir);
  }

  private file(path: string, f: DurableFile): DurableFile {
    return {
      write: (data) => {
        this.onWrite(path, data);
        return f.write(data);
      },
      datasync: async () => {
        await this.syncDone();
        await f.datasync();
      },
      sync: async () => {
        await this.syncDone();
        await f.sync();
      },
      close: () => f.close(),
    };
  }
}
