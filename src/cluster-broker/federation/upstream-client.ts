/**
 * What federation takes from the quorate client, in one place: `connect()` and the interfaces of
 * what it returns, from the client's own modules (not the package root, which sits above the
 * broker). The only arrow from the broker to `client/` (docs/architecture.md#layers).
 */
export type { Connection, Delivery, Receiver } from '../../client/api.js';
export { connect } from '../../client/connection.js';
