/**
 * A member that ignores `echo` (RabbitMQ 3.10's AMQP 1.0 plugin) is asked once, early and while
 * healthy, whether it answers a Begin (docs/failover.md#unresponsive): once it has, an unanswered
 * probe after a hang means the hang, and the member is given up after the probe deadline rather
 * than the longer bound on its next frame. A proxy in front of our broker drops the client's
 * echo requests, so the broker never answers one, as RabbitMQ does; one send is accepted at once,
 * so the silence watch itself never probes.
 */
import type { Socket } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { startBroker } from '../../src/broker.js';
import type { Frame } from '../../src/codec/contract.js';
import { decodeFrame } from '../../src/codec/frames.js';
import { connect } from '../../src/index.js';
import { AMQP_MAGIC, FrameSplitter } from '../support/frame-splitter.js';
import { LoopbackProxy } from '../support/loopback-proxy.js';
import { waitFor } from '../support/net.js';

type AmqpFrame = Extract<Frame, { kind: 'amqp' }>;

/** Forwards both ways, but never passes on a session flow of the client's that asks for an echo. */
class EchoIgnoringProxy extends LoopbackProxy {
  /** The client's AMQP frames, as written (dropped echo requests included). */
  readonly fromClient: AmqpFrame[] = [];
  echoesDropped = 0;

  protected accept(client: Socket): void {
    const upstream = this.linkUpstream(client);
    upstream.on('data', (chunk) => client.write(chunk));
    const splitter = new FrameSplitter();
    client.on('data', (chunk: Buffer) => {
      for (const unit of splitter.push(chunk)) {
        const isFrame = unit.readUInt32BE(0) !== AMQP_MAGIC && unit.length > 8 && unit[5] === 0;
        const frame = isFrame ? decodeFrame(Buffer.from(unit), 0, unit.length) : undefined;
        if (frame?.kind === 'amqp') {
          this.fromClient.push(frame);
          const p = frame.performative;
          if (p.type === 'flow' && p.body.echo === true && p.body.handle === undefined) {
            this.echoesDropped++;
            continue;
          }
        }
        upstream.write(unit);
      }
    });
  }

  count(type: AmqpFrame['performative']['type']): number {
    return this.fromClient.filter((f) => f.performative.type === type).length;
  }
}

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

it('a member that leaves the early echo unanswered is asked by a Begin, which it answers', async () => {
  const broker = await startBroker({ host: '127.0.0.1', port: 0 });
  cleanups.push(() => broker.stop());
  const proxy = new EchoIgnoringProxy({ host: '127.0.0.1', port: broker.port });
  const port = await proxy.listen();
  cleanups.push(() => proxy.close());
  const conn = await connect({ urls: `amqp://127.0.0.1:${port}` });
  cleanups.push(() => conn.close());
  let failovers = 0;
  conn.on('failover', () => failovers++);

  const sender = await conn.openSender('begin-probe');
  expect((await sender.send({ body: 'one' })).state).toBe('accepted');
  // the probe session is begun and, once answered, ended: the connection's own session stays
  await waitFor(() => proxy.count('end') > 0, {
    timeoutMs: 30_000,
    what: 'a Begin probe, answered and ended, after the unanswered early echo',
    describe: () =>
      `begins ${proxy.count('begin')}, ends ${proxy.count('end')}, echoes dropped ${proxy.echoesDropped}`,
  });
  expect(proxy.count('begin')).toBe(2);
  expect(proxy.echoesDropped).toBeGreaterThan(0);
  expect(failovers).toBe(0);
  expect((await sender.send({ body: 'two' })).state).toBe('accepted');
});
