/**
 * One log record per AMQP frame in and out, at the logger's `trace` level: what `QUORATE_LOG=trace`
 * and `--log-level trace` show, as rhea's `DEBUG=rhea*` does. Only AMQP frames and heartbeats are
 * traced: SASL frames carry credentials. Decided once per connection, so a logger with trace off
 * (or none) costs one undefined check per frame.
 */

import type { Logger } from '../common/logger.js';
import type { Performative } from './codec-port.js';

/** Records one frame: `p` undefined is an empty frame (a heartbeat). */
export type FrameTrace = (
  direction: 'in' | 'out',
  channel: number,
  p: Performative | undefined,
  payloadBytes: number,
) => void;

/** The tracer for `logger`, or undefined when it does not trace. */
export function frameTraceFor(logger: Logger | undefined): FrameTrace | undefined {
  if (logger?.trace === undefined) return undefined;
  if (logger.isLevelEnabled !== undefined && !logger.isLevelEnabled('trace')) return undefined;
  return (direction, channel, p, payloadBytes) => {
    const arrow = direction === 'in' ? '<-' : '->';
    if (p === undefined) {
      logger.trace?.({ channel }, `${arrow} empty frame (heartbeat)`);
      return;
    }
    const record: Record<string, unknown> = { channel, ...p.body };
    if (payloadBytes > 0) record.payloadBytes = payloadBytes;
    logger.trace?.(record, `${arrow} ${p.type}`);
  };
}
