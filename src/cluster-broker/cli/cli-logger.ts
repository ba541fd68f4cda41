/**
 * The logger every `quorate-broker` command gives its parts (server, store, replica,
 * supervisor): one line per entry on stderr, `<ISO time> <LEVEL> <message> <fields as JSON>`
 * (common/line-logger.ts). Warnings and errors are on by default; `--log-level` moves the
 * threshold, `trace` adds every AMQP frame of every client connection.
 */
import {
  createLineLogger,
  type LineLogger,
  LOG_LEVELS,
  type LogLevel,
  logLevelNamed,
} from '../../common/line-logger.js';
import { AmqpError } from '../../errors.js';

export { LOG_LEVELS, type LogLevel };
export const DEFAULT_LOG_LEVEL: LogLevel = 'warn';

/** The common Logger with every level present: what the server, store, replica and supervisor take. */
export type CliLogger = LineLogger;

/** The `--log-level` value, or the default; throws AmqpError('amqp:invalid-field') on anything else. */
export function parseLogLevel(raw: string | undefined): LogLevel {
  if (raw === undefined) return DEFAULT_LOG_LEVEL;
  const level = logLevelNamed(raw);
  if (level !== undefined) return level;
  throw new AmqpError(
    'amqp:invalid-field',
    `--log-level must be one of ${LOG_LEVELS.join('|')}, got '${raw}'`,
  );
}

export function createCliLogger(level: LogLevel, sink: { write(chunk: string): unknown }): CliLogger {
  return createLineLogger({ level, write: (line) => sink.write(line), stamp: 'time' });
}
