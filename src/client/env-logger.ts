/**
 * The logger used when connect() is given none: silent, unless the environment variable
 * `QUORATE_LOG` is `debug`, `info` or `warn`; then one line per record goes to stderr:
 * `quorate <level> <message> <fields as JSON>`. Errors in the fields are written with their
 * name, condition, code and message, so a failed connection attempt says why.
 */
import type { Logger } from './types.js';

export const LOG_ENV = 'QUORATE_LOG';

const LEVELS = ['debug', 'info', 'warn', 'error'] as const;
type Level = (typeof LEVELS)[number];

/** The logger for `QUORATE_LOG` (undefined, i.e. silent, when it is unset or not a level). */
export function loggerFromEnv(
  env: NodeJS.ProcessEnv = process.env,
  write: (line: string) => void = (line) => process.stderr.write(line),
): Logger | undefined {
  const wanted = env[LOG_ENV]?.trim().toLowerCase();
  const min = LEVELS.indexOf(wanted as Level);
  if (wanted === undefined || min < 0) return undefined;
  const at =
    (level: Level) =>
    (obj: unknown, msg?: string): void => {
      const fields = obj === undefined ? '' : ` ${safeJson(obj)}`;
      write(`quorate ${level} ${msg ?? ''}${fields}\n`);
    };
  const logger: Logger = {};
  for (const level of LEVELS.slice(min)) logger[level] = at(level);
  return logger;
}

function safeJson(obj: unknown): string {
  try {
    return JSON.stringify(obj, (_key, value: unknown) => {
      if (value instanceof Error) return describeError(value);
      if (typeof value === 'bigint') return value.toString();
      if (value instanceof Uint8Array) return `<${value.length} bytes>`;
      return value;
    });
  } catch {
    return String(obj);
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
