/** AMQP error condition symbols the engine raises (spec part 2, 2.8.15-2.8.18). */
export const Condition = {
  internalError: 'amqp:internal-error',
  decodeError: 'amqp:decode-error',
  resourceLimitExceeded: 'amqp:resource-limit-exceeded',
  notAllowed: 'amqp:not-allowed',
  invalidField: 'amqp:invalid-field',
  notImplemented: 'amqp:not-implemented',
  illegalState: 'amqp:illegal-state',
  unauthorizedAccess: 'amqp:unauthorized-access',
  connectionForced: 'amqp:connection:forced',
  framingError: 'amqp:connection:framing-error',
  windowViolation: 'amqp:session:window-violation',
  errantLink: 'amqp:session:errant-link',
  handleInUse: 'amqp:session:handle-in-use',
  unattachedHandle: 'amqp:session:unattached-handle',
  detachForced: 'amqp:link:detach-forced',
  transferLimitExceeded: 'amqp:link:transfer-limit-exceeded',
  messageSizeExceeded: 'amqp:link:message-size-exceeded',
  linkStolen: 'amqp:link:stolen',
} as const;

/** Serial-number difference a - b for uint32 counters (RFC 1982 style, result in int32). */
export function serialDiff(a: number, b: number): number {
  return (a - b) | 0;
}

/** uint32 increment with wrap-around. */
export function inc32(n: number): number {
  return (n + 1) >>> 0;
}
