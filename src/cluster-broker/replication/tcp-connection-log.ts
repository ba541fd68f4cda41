/**
 * What the TCP transport (tcp-transport.ts) logs about its connections: which errors are the
 * routine life of a cluster (not logged), a connection's remote address, and dropped messages at
 * a bounded rate.
 */
import type net from 'node:net';

/** Connection errors that are the normal life of a cluster (a peer down or restarting). */
export const ROUTINE_ERRORS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

export function remoteOf(s: net.Socket): string {
  // A TLS socket refused during its handshake may be closed already: its address is then only
  // on the TCP socket it wraps (`_parent`, kept by Node for exactly this).
  const parent = (s as net.Socket & { _parent?: net.Socket | null })._parent;
  const from = s.remoteAddress === undefined && parent ? parent : s;
  return `${from.remoteAddress ?? '?'}:${from.remotePort ?? '?'}`;
}

/** Logs the first of a run of dropped messages on a connection, then at most one summary per 5 s. */
export class DropLog {
  private count = 0;
  private lastAt = 0;
  constructor(private readonly log: (fields: Record<string, unknown>) => void) {}
  note(fields: Record<string, unknown>): void {
    this.count++;
    const now = Date.now();
    if (this.count > 1 && now - this.lastAt < 5000) return;
    this.log({ ...fields, dropped: this.count });
    this.lastAt = now;
  }
}
