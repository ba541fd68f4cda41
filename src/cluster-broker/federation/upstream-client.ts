/**
 * What federation takes from the quorate client, in one place: `connect()` and the interfaces of
 * what it returns, from the client's own modules (not the package root, which sits above the
 * broker). The only arrow from the broker to `client/` (docs/architecture.md#layers).
 */
import type { Delivery } from '../../client/api.js';
import { Delivery as ClientDelivery } from '../../client/delivery.js';
import { ForeignDeliveryError } from './errors.js';

export type { Connection, Delivery, Receiver } from '../../client/api.js';
export { connect } from '../../client/connection.js';

/**
 * The bytes `d`'s message arrived as (its transfer's complete payload, which the decoded message
 * was read from), so that a move passes them through instead of encoding the decoded message
 * again (copy.ts copies what it keeps of them).
 */
export function encodedMessage(d: Delivery): Uint8Array {
  const payload = d instanceof ClientDelivery ? d.transfers[0]?.payload : undefined;
  if (payload === undefined) throw new ForeignDeliveryError();
  return payload;
}
