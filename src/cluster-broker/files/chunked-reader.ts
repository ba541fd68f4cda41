/**
 * Reading a store file of any size in bounded chunks: a window of READ_CHUNK_BYTES (or one
 * record, when a record is longer) is held at a time, never the whole file. Log segments,
 * the Raft log and snapshots may be past 2 GiB, where one `readFile` fails outright
 * (docs/production.md#store-size).
 */
import { constants as bufferConstants } from 'node:buffer';
import { crc32 } from './crc32.js';
import type { DurableFs, ReadableFile } from './durable-fs.js';
import { StoreError } from './errors.js';

/** Bytes read from disk at a time. */
export const READ_CHUNK_BYTES = 8 * 1024 * 1024;

/** Bytes of a file (or of a buffer, in tests) by position; views valid until the next call. */
export interface ByteSource {
  readonly size: number;
  /** Bytes [pos, pos + length) clamped to the end, when they are at hand without a read; else undefined. */
  peek(pos: number, length: number): Uint8Array | undefined;
  /** Bytes [pos, pos + length) clamped to the end. */
  bytes(pos: number, length: number): Promise<Uint8Array>;
}

/** A buffer already in memory as a ByteSource. */
export class BufferSource implements ByteSource {
  constructor(private readonly buf: Uint8Array) {}
  get size(): number {
    return this.buf.length;
  }
  peek(pos: number, length: number): Uint8Array {
    return this.buf.subarray(pos, Math.min(pos + length, this.buf.length));
  }
  async bytes(pos: number, length: number): Promise<Uint8Array> {
    return this.peek(pos, length);
  }
}

export class ChunkedReader implements ByteSource {
  private window: Uint8Array = new Uint8Array(0);
  private windowStart = 0;

  private constructor(
    private readonly file: ReadableFile,
    private readonly chunkBytes: number,
  ) {}

  /** Opens `path`; rejects with `code` 'ENOENT' when it is missing. */
  static async open(fs: DurableFs, path: string, chunkBytes = READ_CHUNK_BYTES): Promise<ChunkedReader> {
    return new ChunkedReader(await fs.openRead(path), chunkBytes);
  }

  /** The file's size when opened. */
  get size(): number {
    return this.file.size;
  }

  peek(pos: number, length: number): Uint8Array | undefined {
    const end = Math.min(pos + length, this.file.size);
    if (pos < this.windowStart || end > this.windowStart + this.window.length) return undefined;
    return this.window.subarray(pos - this.windowStart, Math.max(pos, end) - this.windowStart);
  }

  /**
   * Bytes [pos, pos + length) clamped to the end of the file: a view valid until the next call
   * (copy what must outlive it). The caller bounds `length` (a record's checked length).
   */
  async bytes(pos: number, length: number): Promise<Uint8Array> {
    const end = Math.min(pos + length, this.file.size);
    const held = this.peek(pos, length);
    if (held !== undefined) return held;
    this.window = new Uint8Array(0); // let the old window go before the next one is allocated
    // a record longer than a chunk comes with a chunk more: the next record's header and most
    // records after it are then at hand without another read
    const want = end - pos > this.chunkBytes ? end - pos + this.chunkBytes : this.chunkBytes;
    this.window = await this.file.read(pos, want);
    this.windowStart = pos;
    return this.window.subarray(0, Math.max(0, end - pos));
  }

  close(): Promise<void> {
    return this.file.close();
  }
}

/** Runs `use` on `path` opened for chunked reads, closing it after. */
export async function withChunkedReader<T>(
  fs: DurableFs,
  path: string,
  use: (reader: ChunkedReader) => Promise<T>,
): Promise<T> {
  const reader = await ChunkedReader.open(fs, path);
  try {
    return await use(reader);
  } finally {
    await reader.close();
  }
}

/**
 * The `length` bytes from `from` to the end of the file, read a chunk at a time into one buffer,
 * and their crc32 (continuing `crcSeed`, the checksum of what the file's checksum covers before
 * them). One buffer because BrokerState.restore parses one (and a cluster member's state machine
 * too); its size is the live state the broker held in memory when it wrote the snapshot. Beyond
 * what one buffer can hold, a clear StoreError rather than a crash.
 */
export async function readStateChunks(
  reader: ChunkedReader,
  from: number,
  length: number,
  file: string,
  crcSeed = 0,
): Promise<{ state: Uint8Array; crc: number }> {
  if (length > bufferConstants.MAX_LENGTH) {
    throw new StoreError(
      `${file}: a snapshot state of ${length} bytes is more than one buffer of this process holds (${bufferConstants.MAX_LENGTH})`,
    );
  }
  const state = new Uint8Array(length);
  let crc = crcSeed;
  for (let at = 0; at < length; at += READ_CHUNK_BYTES) {
    const chunk = await reader.bytes(from + at, Math.min(READ_CHUNK_BYTES, length - at));
    state.set(chunk, at);
    crc = crc32(chunk, crc);
  }
  return { state, crc };
}
