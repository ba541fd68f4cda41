/**
 * Where `--repair` sets damaged store files aside: `<data dir>/quarantine/<UTC time>/`, created
 * on the first file. Files are moved (or, for a segment whose intact prefix stays in use, copied
 * whole) so the operator keeps every original byte for inspection or a later manual recovery.
 */
import { basename, join } from 'node:path';
import { type DurableFs, nodeDurableFs } from '../files/durable-fs.js';

export const QUARANTINE_DIR = 'quarantine';

export class Quarantine {
  private target: string | undefined;
  readonly files: string[] = [];

  constructor(
    private readonly dataDir: string,
    private readonly now: () => Date = () => new Date(),
    private readonly fs: DurableFs = nodeDurableFs,
  ) {}

  /** The directory files went to, once one did. */
  get dir(): string | undefined {
    return this.target;
  }

  /** Moves `file` (a path inside the data dir) into the quarantine directory. */
  async move(file: string): Promise<void> {
    await this.fs.rename(file, await this.destination(file));
    this.files.push(basename(file));
  }

  /** Copies `file` whole into the quarantine directory (the caller then cuts the original). */
  async copy(file: string): Promise<void> {
    const to = await this.destination(file);
    await this.fs.copyFile(file, to);
    // the original is cut next: the copy's bytes must be on disk first, not just its name
    await this.fs.syncFile(to);
    this.files.push(basename(file));
  }

  /** Makes the moves durable: both directories' entries. */
  async sync(): Promise<void> {
    if (this.target === undefined) return;
    await this.fs.syncDir(this.target);
    await this.fs.syncDir(join(this.dataDir, QUARANTINE_DIR));
    await this.fs.syncDir(this.dataDir);
  }

  private async destination(file: string): Promise<string> {
    if (this.target === undefined) {
      // colons are not portable in file names; milliseconds keep two repairs apart
      const stamp = this.now().toISOString().replace(/:/g, '-');
      this.target = join(this.dataDir, QUARANTINE_DIR, stamp);
      await this.fs.mkdir(this.target);
    }
    return join(this.target, basename(file));
  }
}
