/** Interop: rhea's WebSocket client (websocket_connect over the ws package) against our ws port. */
import rhea from 'rhea';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type BrokerHandle, startBroker } from '../../../src/broker.js';

const started: BrokerHandle[] = [];
afterEach(async () => {
  for (const b of started.splice(0)) await b.stop();
});

describe('rhea over WebSocket', () => {
  it('sends and receives through the broker ws port', async () => {
    const b = await startBroker({ host: '127.0.0.1', port: 0, webSocket: { port: 0 } });
    started.push(b);
    const container = rhea.create_container({ id: 'rhea-ws' });
    const wsConnect = container.websocket_connect(WebSocket as never);
    const got = await new Promise<unknown>((resolve, reject) => {
      const conn = container.connect({
        connection_details: wsConnect(b.wsUrl!, ['amqp'], {}),
        reconnect: false,
      } as never);
      conn.on('connection_error', (ctx) => reject(ctx.connection.error));
      conn.on('disconnected', (ctx) => reject(ctx.error ?? new Error('disconnected')));
      conn.open_receiver('rq').on('message', (ctx) => {
        ctx.delivery?.accept();
        resolve(ctx.message?.body);
        conn.close();
      });
      conn.open_sender('rq').on('sendable', (ctx) => {
        if (ctx.sender?.sendable()) ctx.sender.send({ body: 'over-websocket' });
      });
    });
    expect(got).toBe('over-websocket');
  });
});
