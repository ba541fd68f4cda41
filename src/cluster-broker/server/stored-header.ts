/**
 * The header a publisher link stores on a message sent without one (most are: the quorate
 * client's, rhea's): first-acquirer set and nothing else, encoded once. Its exact bytes let a
 * consumer link see, without decoding, that a first delivery goes out as stored
 * (docs/architecture.md#delivery-path).
 */
import { withHeader } from '../../codec/index.js';

/** The encoded header section `{ firstAcquirer: true }`. */
export const FIRST_ACQUIRER_ONLY: Uint8Array = withHeader(new Uint8Array(0), { firstAcquirer: true });

/** True when `message` begins with FIRST_ACQUIRER_ONLY: its header is exactly that, read without a decode. */
export function hasFirstAcquirerOnlyHeader(message: Uint8Array): boolean {
  const n = FIRST_ACQUIRER_ONLY.length;
  if (message.length < n) return false;
  for (let i = 0; i < n; i++) if (message[i] !== FIRST_ACQUIRER_ONLY[i]) return false;
  return true;
}
