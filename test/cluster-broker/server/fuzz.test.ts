/**
 * Hostile bytes through the broker's connection handler in process (fast-check): after a valid
 * header and Open, arbitrary bytes never throw out of the handler, and the connection either
 * keeps going or ends with a Close; the backend stays usable.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BrokerConnection } from '../../../src/cluster-broker/server/broker-connection.js';
import { memoryBackend } from '../../../src/cluster-broker/server/local-backend.js';
import { encodeAmqpFrame, encodeProtocolHeader } from '../../../src/codec/index.js';
import { serverContext } from './in-process.js';

const header = encodeProtocolHeader(0);
const open = encodeAmqpFrame(0, { type: 'open', body: { containerId: 'fuzz' } });
const begin = encodeAmqpFrame(0, {
  type: 'begin',
  body: { nextOutgoingId: 0, incomingWindow: 10, outgoingWindow: 10 },
});
const attach = encodeAmqpFrame(0, {
  type: 'attach',
  body: { name: 'l', handle: 0, role: false, target: { address: 'fz' } },
});

describe('connection handler fuzz', () => {
  it('survives arbitrary bytes after a valid prefix', () => {
    const backend = memoryBackend();
    const ctx = serverContext(backend);
    const prefixes = [
      new Uint8Array(0),
      header,
      Buffer.concat([header, open]),
      Buffer.concat([header, open, begin, attach]),
    ];
    fc.assert(
      fc.property(
        fc.constantFrom(...prefixes),
        fc.array(fc.uint8Array({ minLength: 0, maxLength: 300 }), { maxLength: 6 }),
        (prefix, chunks) => {
          let ended = false;
          const conn = new BrokerConnection(
            ctx,
            {
              write: () => {},
              end: () => {
                ended = true;
              },
            },
            0,
          );
          conn.receive(prefix, 0);
          for (const c of chunks) conn.receive(c, 1);
          conn.tick(100_000); // past every deadline: the handler must end, not hang
          expect(ended || conn.closed).toBe(true);
        },
      ),
      { numRuns: 3000, seed: 7 },
    );
    expect(backend.state.hasQueue('fz')).toBe(true);
    void backend.close();
  });
});
