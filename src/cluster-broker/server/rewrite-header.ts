/**
 * The header a message goes out with on a consumer's or browser's link: the stored bytes with the
 * delivery-count and first-acquirer of this delivery (consumer-link.ts, browser-link.ts). Free of
 * either link, so it has its own home.
 */
import { type MessageHeader, splitMessage, withHeader } from '../../codec/index.js';
import type { AcquiredMessage } from '../core/results.js';
import { hasFirstAcquirerOnlyHeader } from './stored-header.js';

/**
 * The stored bytes with only the header section replaced (delivery-count, first-acquirer); the
 * stored bytes themselves when their header already says so (a first delivery: the publisher
 * link stored it with first-acquirer set).
 */
export function rewriteHeader(m: AcquiredMessage): Uint8Array {
  // the common first delivery, seen without a decode: stored with the header a publisher link
  // writes on a message sent without one (docs/architecture.md#delivery-path)
  if (m.deliveryCount === 0 && m.firstAcquirer && hasFirstAcquirerOnlyHeader(m.message)) return m.message;
  const { header } = splitMessage(m.message);
  if (
    (header?.deliveryCount ?? 0) === m.deliveryCount &&
    (header?.firstAcquirer ?? false) === m.firstAcquirer
  ) {
    return m.message;
  }
  const h: MessageHeader = { ...header };
  if (m.deliveryCount > 0) h.deliveryCount = m.deliveryCount;
  else delete h.deliveryCount;
  if (m.firstAcquirer) h.firstAcquirer = true;
  else delete h.firstAcquirer;
  return withHeader(m.message, h);
}
