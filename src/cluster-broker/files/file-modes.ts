/**
 * A broker's data directory holds every message: only its owner may read it. The directory (and
 * every directory below it) is kept at mode 0700 and every file at 0600; stores create their
 * files that way (FILE_MODE, DIR_MODE), and `secureDataDir` tightens what an older version, or a
 * permissive umask, left wider.
 */
import { chmod, mkdir, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../../common/logger.js';

export const DIR_MODE = 0o700;
export const FILE_MODE = 0o600;

/** Creates `dir` (0700) if missing; makes it and everything in it owner-only. */
export async function secureDataDir(dir: string, logger: Pick<Logger, 'warn'> = {}): Promise<void> {
  await mkdir(dir, { recursive: true, mode: DIR_MODE });
  let widened = 0;
  const walk = async (path: string, isDir: boolean): Promise<void> => {
    const want = isDir ? DIR_MODE : FILE_MODE;
    const st = await stat(path);
    if ((st.mode & 0o077) !== 0) {
      await chmod(path, want);
      widened++;
    }
    if (!isDir) return;
    for (const e of await readdir(path, { withFileTypes: true })) {
      if (e.isDirectory()) await walk(join(path, e.name), true);
      else if (e.isFile()) await walk(join(path, e.name), false);
    }
  };
  await walk(dir, true);
  if (widened > 0) {
    logger.warn?.(
      { dir, paths: widened },
      'data dir: made group/world-accessible paths owner-only (0700/0600)',
    );
  }
}
