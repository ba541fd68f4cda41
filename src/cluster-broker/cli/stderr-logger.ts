/** The CLI's logger: one line per entry on stderr (what operators and supervisors read). */
import type { BrokerLogger } from '../server/options.js';

function safeJson(obj: unknown): string {
  try {
    return JSON.stringify(obj, (_k, v: unknown) => (v instanceof Error ? { message: v.message } : v));
  } catch {
    return String(obj);
  }
}

export function stderrLogger(stderr: { write(chunk: string): unknown }): BrokerLogger {
  return {
    warn: (obj, msg) => stderr.write(`warning: ${msg ?? ''} ${safeJson(obj)}\n`),
    error: (obj, msg) => stderr.write(`error: ${msg ?? ''} ${safeJson(obj)}\n`),
    info: (obj, msg) => stderr.write(`${msg ?? ''} ${safeJson(obj)}\n`),
  };
}
