/**
 * Value encoding, the one import point for the rest of the codec: the default JS -> AMQP mapping
 * (encode-value.ts), one writer per primitive type (encode-scalars.ts), compound framing
 * (encode-compound.ts) and explicit typing (encode-typed.ts). Array element encoding is in
 * encode-array.ts.
 */
export { beginCompound, endCompound, enter } from './encode-compound.js';
export {
  writeBinary,
  writeBoolean,
  writeDouble,
  writeInt,
  writeLong,
  writeNull,
  writeString,
  writeStringCode,
  writeSymbol,
  writeTimestamp,
  writeUbyte,
  writeUint,
  writeUlong,
  writeUshort,
} from './encode-scalars.js';
export { writeTyped } from './encode-typed.js';
export { writeList, writeMap, writeSymbolKeyMap, writeValue } from './encode-value.js';
