/**
 * The one stderr line logger of quorate: what `QUORATE_LOG` gives a client that has no logger,
 * and what every `quorate-broker` command gives its parts. One line per record:
 * `<stamp> <level> <message> <fields as JSON>`; errors in the fields carry their name, condition,
 * code and cause, so a failed attempt says why; bytes are shown by their size, bigints as text.
 */
import type { Logger } from './logger.js';

/** The levels, most detailed first. `trace` adds every AMQP frame in and out. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** A {@link Logger} with every level present. */
export type LineLogger = Required<Omit<Logger, 'isLevelEnabled'>> & Pick<Required<Logger>, 'isLevelEnabled'>;

export interface LineLoggerOptions {
  /** Records below this level are dropped. */
  level: LogLevel;
  /** Where a finished line (ending in a newline) goes. */
  write: (line: string) => void;
  /** What starts each line: the CLI's ISO time and upper-case level, or the client's `quorate <level>`. */
  stamp: 'time' | 'quorate';
}

/** The level named by `raw` (any case, surrounding spaces ignored), or undefined. */
export function logLevelNamed(raw: string): LogLevel | undefined {
  const wanted = raw.trim().toLowerCase();
  return (LOG_LEVELS as readonly string[]).includes(wanted) ? (wanted as LogLevel) : undefined;
}

export function createLineLogger(options: LineLoggerOptions): LineLogger {
  const threshold = LOG_LEVELS.indexOf(options.level);
  const at =
    (level: LogLevel) =>
    (obj: unknown, msg?: string): void => {
      if (LOG_LEVELS.indexOf(level) < threshold) return;
      // pino also accepts a bare message as the first argument
      const [text, extra] =
        typeof obj === 'string' && msg === undefined ? [obj, undefined] : [msg ?? '', obj];
      const head =
        options.stamp === 'time' ? `${new Date().toISOString()} ${level.toUpperCase()}` : `quorate ${level}`;
      options.write(`${head} ${text}${fieldsText(extra)}\n`);
    };
  return {
    trace: at('trace'),
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    isLevelEnabled: (level) => {
      const i = LOG_LEVELS.indexOf(level as LogLevel);
      return i >= 0 && i >= threshold;
    },
  };
}

function fieldsText(obj: unknown): string {
  if (obj === undefined || obj === null) return '';
  if (typeof obj !== 'object') return ` ${String(obj)}`;
  try {
    const json = JSON.stringify(obj, (_key, value: unknown) => {
      if (value instanceof Error) return describeError(value);
      if (typeof value === 'bigint') return value.toString();
      if (value instanceof Uint8Array) return `<${value.length} bytes>`;
      if (value instanceof Map) return Object.fromEntries(value);
      return value;
    });
    return json === '{}' ? '' : ` ${json}`;
  } catch {
    return ` ${String(obj)}`;
  }
}

function describeError(e: Error): Record<string, unknown> {
  const out: Record<string, unknown> = { name: e.name, message: e.message };
  const { condition, code } = e as { condition?: unknown; code?: unknown };
  if (condition !== undefined) out.condition = condition;
  if (code !== undefined) out.code = code;
  if (e.cause instanceof Error) out.cause = describeError(e.cause);
  return out;
}
