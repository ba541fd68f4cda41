/**
 * A single node's cluster id (docs/federation.md#cluster-id): `--cluster-id` when given, else one
 * generated on first start and kept in `<dataDir>/cluster-id`, so routes of federated messages
 * keep naming this broker across restarts. Without a data dir nothing survives a stop anyway:
 * a fresh id per process.
 */
import { randomUUID } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FILE_MODE } from '../files/file-modes.js';
import { BrokerConfigError } from './config-error.js';

export const CLUSTER_ID_FILE = 'cluster-id';

function generated(): string {
  return `single-${randomUUID()}`;
}

/** The id to run with: `given`, the one recorded in `dataDir`, or a new one (recorded there). */
export async function singleNodeClusterId(
  given: string | undefined,
  dataDir: string | undefined,
): Promise<string> {
  if (given !== undefined) {
    if (given.trim() === '') throw new BrokerConfigError('--cluster-id must not be empty');
    return given;
  }
  if (dataDir === undefined) return generated();
  const file = join(dataDir, CLUSTER_ID_FILE);
  try {
    const recorded = (await readFile(file, 'utf8')).trim();
    if (recorded !== '') return recorded;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const id = generated();
  const tmp = `${file}.tmp`;
  await writeFile(tmp, `${id}\n`, { mode: FILE_MODE });
  await rename(tmp, file);
  return id;
}
