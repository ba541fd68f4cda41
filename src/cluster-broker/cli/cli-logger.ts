/**
 * The logger every `quorate-broker` command gives its parts (server, store, replica,
 * supervisor): one line per entry on stderr, `<ISO time> <LEVEL> <message> <fields as JSON>`.
 * Warnings and errors are on by default; `--log-level` moves the threshold.
 */
import type { Logger } from '../../common/logger.js';
import { AmqpError } from '../../errors.js';

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const DEFAULT_LOG_LEVEL: LogLevel = 'warn';

/** The common {@link Logger} with every level present: what the server, store, replica and supervisor take. */
export type CliLogger = Required<Logger>;

/** The `--log-level` value, or the default; throws AmqpError('amqp:invalid-field') on anything else. */
export function parseLogLevel(raw: string | undefined): LogLevel {
  if (raw === undefined) return DEFAULT_LOG_LEVEL;
  if ((LOG_LEVELS as readonly string[]).includes(raw)) return raw as LogLevel;
  throw new AmqpError(
    'amqp:invalid-field',
    `--log-level must be one of ${LOG_LEVELS.join('|')}, got '${raw}'`,
  );
}

function fields(obj: unknown): string {
  if (obj === undefined || obj === null) return '';
  if (typeof obj !== 'object') return ` ${String(obj)}`;
  try {
    const json = JSON.stringify(obj, (_k, v: unknown) => (v instanceof Error ? { message: v.message } : v));
    return json === '{}' ? '' : ` ${json}`;
  } catch {
    return ` ${String(obj)}`;
  }
}

export function createCliLogger(level: LogLevel, sink: { write(chunk: string): unknown }): CliLogger {
  const threshold = LOG_LEVELS.indexOf(level);
  const at =
    (l: LogLevel) =>
    (obj: unknown, msg?: string): void => {
      if (LOG_LEVELS.indexOf(l) < threshold) return;
      // pino also accepts a bare message as the first argument
      const [text, extra] =
        typeof obj === 'string' && msg === undefined ? [obj, undefined] : [msg ?? '', obj];
      sink.write(`${new Date().toISOString()} ${l.toUpperCase()} ${text}${fields(extra)}\n`);
    };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}
