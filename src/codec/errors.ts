// The codec's errors live in src/errors.ts (shared by every layer); re-exported for contract.ts readers.
export { AmqpDecodeError, AmqpEncodeError, AmqpError } from '../errors.js';
