/**
 * The store's record limit seen by a publisher over AMQP (docs/production.md#record-limit): a
 * message whose record would be past it is rejected with amqp:link:message-size-exceeded, to that
 * transfer alone; its link and connection go on (the next message is accepted), and nothing of it
 * was written (a restart on the same data dir holds only the accepted message). The broker's
 * store is given a small record limit (`store.maxRecordBytes`) so a 256 KiB message reaches it
 * under the default max-message-size (16 MiB); the path is the one a 1 GiB record takes.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type BrokerHandle, startBroker } from '../../../src/broker.js';
import { closeConnection, connect, sendAll, TestReceiver } from './rhea-client.js';

const LIMIT = 64 * 1024;
let dir: string | undefined;
let broker: BrokerHandle | undefined;

afterEach(async () => {
  await broker?.stop();
  broker = undefined;
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

const start = (dataDir: string) =>
  startBroker({ host: '127.0.0.1', port: 0, dataDir, store: { maxRecordBytes: LIMIT } });

describe('a message past the store record limit', () => {
  it('is rejected to its publisher alone; the link goes on; nothing of it is written', async () => {
    dir = await mkdtemp(join(tmpdir(), 'quorate-record-limit-'));
    broker = await start(dir);
    const conn = await connect({ port: broker.port });
    const big = Buffer.alloc(4 * LIMIT, 0x61);
    const small = Buffer.from('small');
    // one link: the refused transfer, then a small one on the same link
    const outcomes = await sendAll(conn, 'q', [{ body: big }, { body: small }]);
    expect(outcomes[0]?.state).toBe('rejected');
    expect(outcomes[0]?.error?.condition).toBe('amqp:link:message-size-exceeded');
    expect(outcomes[0]?.error?.description).toMatch(/larger than one store record may be \(65536\)/);
    expect(outcomes[1]?.state).toBe('accepted');
    // the connection too: another link on it publishes
    const after = await sendAll(conn, 'q', [{ body: Buffer.from('after') }]);
    expect(after[0]?.state).toBe('accepted');
    expect(conn.is_open()).toBe(true);
    await closeConnection(conn);
    await broker.stop();

    broker = await start(dir);
    const again = await connect({ port: broker.port });
    const r = new TestReceiver(again, 'q');
    await r.opened;
    // first in line is 'small': the refused message, sent before it, was never written
    const got = await r.next(2, 30_000);
    expect(got.map((g) => Buffer.from(g.message.body as Buffer).toString())).toEqual(['small', 'after']);
    for (const g of got) g.delivery.accept();
    await closeConnection(again);
  });
});
