/**
 * Plain TCP reads land in slabs (src/client/slab-reads.ts), not in stream chunks: every message
 * kept by the application must stay intact while later reads arrive, single-frame and
 * multi-transfer alike.
 */
import { describe, expect, it } from 'vitest';
import type { Delivery } from '../../../src/index.js';
import { brokerAndConnection } from '../../support/broker.js';

const env = brokerAndConnection();

/** A body whose every byte says which message it belongs to. */
function body(i: number, size: number): Uint8Array {
  const b = new Uint8Array(size);
  for (let j = 0; j < size; j++) b[j] = (i * 31 + j) & 0xff;
  return b;
}

describe('client reads into slabs', () => {
  it('messages kept across many later reads keep their bodies and tags', async () => {
    const { conn } = env;
    const sender = await conn.openSender('slab-q');
    // 1 KiB bodies (copied out of the slab) and 200 KiB ones (several transfers, assembled)
    const sizes = Array.from({ length: 600 }, (_, i) => (i % 100 === 7 ? 200 * 1024 : 1024));
    await Promise.all(sizes.map((size, i) => sender.send({ messageId: `m${i}`, body: body(i, size) })));
    const receiver = await conn.openReceiver('slab-q', { credit: 50 });
    const kept: Delivery[] = [];
    while (kept.length < sizes.length) {
      const batch = await receiver.receive({ max: 50, timeoutMs: 10_000 });
      for (const d of batch) {
        kept.push(d);
        await d.accept();
      }
    }
    // every read since the first overwrote nothing a kept message points into
    kept.forEach((d, i) => {
      expect(d.message.messageId).toBe(`m${i}`);
      expect(Buffer.from(d.message.body as Uint8Array).equals(Buffer.from(body(i, sizes[i]!)))).toBe(true);
    });
  });

  it('hands small bodies out as views of the read slab, or as copies with copyBodies', async () => {
    const { conn } = env;
    const firstBody = async (queue: string, copyBodies: boolean) => {
      const sender = await conn.openSender(queue);
      await sender.send({ messageId: queue, body: body(3, 1024) });
      const receiver = await conn.openReceiver(queue, { credit: 1, copyBodies });
      const [d] = await receiver.receive({ max: 1, timeoutMs: 10_000 });
      expect(Buffer.from(d!.message.body as Uint8Array).equals(Buffer.from(body(3, 1024)))).toBe(true);
      return d!.message.body as Uint8Array;
    };
    // a view shares its read's slab (256 KiB); a copy lives in Node's 8 KiB buffer pool
    expect((await firstBody('slab-view-q', false)).buffer.byteLength).toBeGreaterThanOrEqual(64 * 1024);
    expect((await firstBody('slab-copy-q', true)).buffer.byteLength).toBeLessThanOrEqual(Buffer.poolSize);
  });
});
