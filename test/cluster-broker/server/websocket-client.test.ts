/** The client over ws:// against the broker's WebSocket port (docs/websocket.md#client). */
import { afterEach, describe, expect, it } from 'vitest';
import { type BrokerHandle, startBroker } from '../../../src/broker.js';
import { connect } from '../../../src/index.js';

const started: BrokerHandle[] = [];
afterEach(async () => {
  for (const b of started.splice(0)) await b.stop();
});

describe('client over WebSocket', () => {
  it('sends and receives through a ws:// URL, alone and in a list mixed with amqp://', async () => {
    const b = await startBroker({ host: '127.0.0.1', port: 0, webSocket: { port: 0 } });
    started.push(b);
    for (const urls of [[b.wsUrl!], [b.wsUrl!, b.url]]) {
      const conn = await connect({ urls, reconnect: false });
      try {
        const s = await conn.openSender('q');
        const r = await conn.openReceiver('q');
        const body = 'z'.repeat(5000);
        expect((await s.send({ body })).state).toBe('accepted');
        const d = await r.receive({ timeoutMs: 10_000 });
        expect(d.message.body).toBe(body);
        await d.accept();
      } finally {
        await conn.close();
      }
    }
    expect(b.server.stats().connectionsAccepted).toBeGreaterThanOrEqual(2);
  });
});
