/**
 * `node:diagnostics_channel` in the browser build (docs/websocket.md#browser): a page has no
 * diagnostics channels, so nobody ever subscribes. Every publisher checks `hasSubscribers` first
 * (client/diagnostics.ts), so the tracing hooks cost nothing and publish nothing.
 */

/** A channel nobody subscribes to. */
const silentChannel = {
  hasSubscribers: false,
  publish(_message: unknown): void {},
};

/** A tracing channel nobody subscribes to: runs the traced function as is. */
const silentTracingChannel = {
  hasSubscribers: false,
  tracePromise<R>(
    fn: (...args: unknown[]) => Promise<R>,
    _context?: object,
    thisArg?: unknown,
    ...args: unknown[]
  ) {
    return fn.apply(thisArg, args);
  },
};

/** Same name as Node's: a channel that is never subscribed to. */
export function channel(_name: string): typeof silentChannel {
  return silentChannel;
}

/** Same name as Node's: a tracing channel that is never subscribed to. */
export function tracingChannel(_name: string): typeof silentTracingChannel {
  return silentTracingChannel;
}

export default { channel, tracingChannel };
