/** The permission check every part of the broker asks (the server, the HTTP API); compiled by permissions.ts. */

/**
 * A compiled permissions document (`parsePermissions`, `loadPermissionsFile`): who may send to,
 * receive from and monitor what (docs/production.md#permissions).
 */
export interface Permissions {
  /** May `user` (undefined: a connection that did not log in) send to `address`? */
  maySend(user: string | undefined, address: string): boolean;
  /** May `user` receive from `address`? */
  mayReceive(user: string | undefined, address: string): boolean;
  /** May `user` read the broker's HTTP monitoring API? */
  mayMonitor(user: string | undefined): boolean;
  /** May `user` administer queues (the `/management` node; docs/management.md#grant)? */
  mayManage(user: string | undefined): boolean;
}
