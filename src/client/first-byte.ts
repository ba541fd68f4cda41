/**
 * The first-byte deadline of one connection attempt, shared by the Node transport (transport.ts)
 * and the browser's (transport-browser.ts): a member that accepts the connection but sends no
 * byte within `firstByteDeadlineMs` of the dial is given up sooner than `timeoutMs`
 * (docs/failover.md#silent-member); the time the first byte took is told to `onFirstByte`.
 */
import { noFirstByteFailure } from './connect-errors.js';
import { type AttemptOptions, now } from './physical.js';

export interface FirstByteWatch {
  /** A byte came from the peer (only the first call counts). */
  heard(): void;
  /** The attempt settled: drop the deadline. */
  stop(): void;
}

/** Starts the deadline now (the dial's start); `fail` is called with the attempt's error on expiry. */
export function watchFirstByte(opts: AttemptOptions, fail: (err: Error) => void): FirstByteWatch {
  const startedAt = now();
  const { server, firstByteDeadlineMs } = opts;
  let timer: ReturnType<typeof setTimeout> | undefined =
    firstByteDeadlineMs !== undefined && firstByteDeadlineMs < opts.timeoutMs
      ? setTimeout(
          () => fail(noFirstByteFailure(server.host, server.port, firstByteDeadlineMs)),
          firstByteDeadlineMs,
        )
      : undefined;
  let heard = false;
  return {
    heard() {
      if (heard) return;
      heard = true;
      clearTimeout(timer);
      timer = undefined;
      opts.onFirstByte?.(now() - startedAt);
    },
    stop() {
      clearTimeout(timer);
      timer = undefined;
    },
  };
}
