/**
 * Where `--repair` sets damaged store files aside: `<data dir>/quarantine/<UTC time>/`, created
 * on the first file. Files are moved (or, for a segment whose intact prefix stays in use, copied
 * whole) so the operator keeps every original byte for inspection or a later manual recovery.
 */
import { copyFile, mkdir, rename } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { fsyncDir } from './snapshot-file.js';

export const QUARANTINE_DIR = 'quarantine';

export class Quarantine {
  private target: string | undefined;
  readonly files: string[] = [];

  constructor(
    private readonly dataDir: string,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** The directory files went to, once one did. */
  get dir(): string | undefined {
    return this.target;
  }

  /** Moves `file` (a path inside the data dir) into the quarantine directory. */
  async move(file: string): Promise<void> {
    await rename(file, await this.destination(file));
    this.files.push(basename(file));
  }

  /** Copies `file` whole into the quarantine directory (the caller then cuts the original). */
  async copy(file: string): Promise<void> {
    await copyFile(file, await this.destination(file));
    this.files.push(basename(file));
  }

  /** Makes the moves durable: both directories' entries. */
  async sync(): Promise<void> {
    if (this.target === undefined) return;
    await fsyncDir(this.target);
    await fsyncDir(join(this.dataDir, QUARANTINE_DIR));
    await fsyncDir(this.dataDir);
  }

  private async destination(file: string): Promise<string> {
    if (this.target === undefined) {
      // colons are not portable in file names; milliseconds keep two repairs apart
      const stamp = this.now().toISOString().replace(/:/g, '-');
      this.target = join(this.dataDir, QUARANTINE_DIR, stamp);
      await mkdir(this.target, { recursive: true });
    }
    return join(this.target, basename(file));
  }
}
