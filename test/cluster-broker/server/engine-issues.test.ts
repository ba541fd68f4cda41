/**
 * Engine behaviour the broker depends on, checked through the broker's own connection handling.
 */
import { describe, expect, it } from 'vitest';
import { BrokerState } from '../../../src/cluster-broker/core/broker-state.js';
import { memoryBackend } from '../../../src/cluster-broker/server/local-backend.js';
import { type EngineEvent, ProtocolConnection } from '../../../src/protocol/index.js';
import { InProcessPair, msg, serverContext } from './in-process.js';

describe('protocol engine, as the broker uses it', () => {
  it('forgets the unsettled deliveries of a link once it is detached (not only at session end)', async () => {
    const backend = memoryBackend();
    const pair = new InProcessPair(serverContext(backend));
    await pair.open();
    const sender = pair.session.attachSender({ name: 'p', target: { address: 'q' } });
    await pair.settle();
    for (let i = 0; i < 3; i++) sender.send(new Uint8Array([i]), msg({ body: i }));
    await pair.settle();
    const receiver = pair.session.attachReceiver({ name: 'c', source: { address: 'q' } });
    receiver.flow(3);
    await pair.settle();
    expect(pair.of('message')).toHaveLength(3);
    receiver.detach(); // the three deliveries stay unsettled
    await pair.settle();
    const brokerSession = pair.broker.engine.activeSessions()[0]!;
    // A long-lived session that keeps re-attaching consumers must not keep their deliveries.
    expect((brokerSession as unknown as { outgoing: Map<number, unknown> }).outgoing.size).toBe(0);
    await backend.close();
  });

  it('core: an enqueued Buffer view is copied, not kept as a view of the larger buffer', () => {
    const state = new BrokerState();
    state.apply({ type: 'declare', leaderTime: 1, queue: 'q', options: {} });
    const chunk = Buffer.alloc(64 * 1024, 7); // a socket read chunk holding many frames
    const message = chunk.subarray(100, 1124);
    state.apply({ type: 'enqueue', leaderTime: 1, queue: 'q', message });
    // a view would pin the whole socket chunk for as long as the message is queued, and see the
    // socket's next read: the queue keeps its own copy (in memory the queue owns)
    const stored = state.browse('q')[0]!.message;
    expect(stored.buffer).not.toBe(chunk.buffer);
    chunk.fill(9);
    expect(stored.length).toBe(1024);
    expect(stored.every((b) => b === 7)).toBe(true);
  });

  it('engine: a small message read from a large chunk is owned, not a view of the chunk', () => {
    const client = new ProtocolConnection({ role: 'client', open: { containerId: 'c' } });
    const server = new ProtocolConnection({ role: 'server', open: { containerId: 's' } });
    const pump = () => {
      for (let moved = true; moved; ) {
        moved = false;
        const fromClient = client.takeOutput();
        // what a socket read looks like: many frames in one Buffer
        if (fromClient.length > 0) server.receive(Buffer.concat([...fromClient, Buffer.alloc(0)]));
        for (const c of server.takeOutput()) client.receive(c);
        for (const e of server.pollEvents()) {
          moved = true;
          events.push(e);
          if (e.type === 'attach-request') {
            e.link.accept({ target: { address: 'q' } });
            (e.link as unknown as { flow(n: number): void }).flow(100);
          }
        }
        if (client.pollEvents().length > 0 || fromClient.length > 0) moved = true;
      }
    };
    const events: EngineEvent[] = [];
    pump();
    const session = client.begin();
    const sender = session.attachSender({ name: 'l', target: { address: 'q' } });
    pump();
    for (let i = 0; i < 40; i++) sender.send(new Uint8Array([i]), msg({ body: new Uint8Array(1000) }));
    pump();
    const messages = events.filter(
      (e): e is Extract<EngineEvent, { type: 'message' }> => e.type === 'message',
    );
    expect(messages.length).toBe(40);
    // small payloads are copied into Node's Buffer pool (one shared 8 KiB slab), never kept as a
    // view of the 64 KiB socket chunk
    expect(messages[0]!.delivery.payload.buffer.byteLength).toBeLessThanOrEqual(Buffer.poolSize);
  });
});
