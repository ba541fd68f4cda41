/**
 * What a member's file storage (file-storage.ts) is opened with, and what its recovery reports
 * when it found damage; apart from its code so the replica and its tests can name them without it.
 */
import type { Logger } from '../../common/logger.js';
import type { DurableFs } from '../files/durable-fs.js';

export interface FileStorageOptions {
  readonly dir: string;
  readonly clusterId: string;
  readonly memberId: string;
  /** Default true. */
  readonly groupCommit?: boolean;
  readonly logger?: Logger;
  /** Where damaged files are moved (a `<time>/` directory per recovery). Default `<dir>/quarantine`. */
  readonly quarantineDir?: string;
  /** Every file operation goes through this. Default: node:fs/promises (tests inject a power-loss model). */
  readonly fs?: DurableFs;
}

/** What recovery found damaged, and where it put the damaged files. */
export interface StoreDamage {
  readonly file: 'meta.json' | 'snapshot' | 'log';
  /** Byte offset of the first bad log record. */
  readonly offset?: number;
  readonly reason: string;
  readonly quarantinedTo: string;
}
