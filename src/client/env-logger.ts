/**
 * The logger used when connect() is given none: silent, unless the environment variable
 * `QUORATE_LOG` names a level (`trace`, `debug`, `info`, `warn`, `error`); then one line per
 * record goes to stderr: `quorate <level> <message> <fields as JSON>` (common/line-logger.ts).
 * `trace` adds every frame in and out. A value that is not a level is said once on stderr, so a
 * typo is not a silent minute.
 */
import { createLineLogger, LOG_LEVELS, logLevelNamed } from '../common/line-logger.js';
import type { Logger } from './types.js';

export const LOG_ENV = 'QUORATE_LOG';

let warnedAbout: string | undefined;

/** The logger for `QUORATE_LOG` (undefined, i.e. silent, when it is unset or not a level). */
export function loggerFromEnv(
  env: NodeJS.ProcessEnv = process.env,
  write: (line: string) => void = (line) => process.stderr.write(line),
): Logger | undefined {
  const raw = env[LOG_ENV];
  if (raw === undefined || raw.trim() === '') return undefined;
  const level = logLevelNamed(raw);
  if (level === undefined) {
    if (warnedAbout !== raw) {
      warnedAbout = raw;
      write(`quorate warn ${LOG_ENV}='${raw}' is not one of ${LOG_LEVELS.join('|')}: logging stays off\n`);
    }
    return undefined;
  }
  return createLineLogger({ level, write, stamp: 'quorate' });
}
