/**
 * A paced AMQP source for `receive-cpu --target paced`, run as its own process (its CPU is not the
 * client's): it accepts any receiving link and sends it 1 KiB messages (durable header, a
 * message-id, unsettled, as a broker's queue would), as many as the link's credit allows but no
 * more than `--pace` msg/s, released every `--tick-ms` ms as one socket write. No queue, no
 * store: it only shows how the client's receive cost moves with the pace a broker feeds it at.
 *
 *   node --import tsx bench/lib/paced-peer.ts [--pace R (0: unpaced)] [--tick-ms T]
 *
 * Prints `{"ready":true,"amqpPort":P}` once listening on 127.0.0.1.
 */
import { createServer, type Socket } from 'node:net';
import { encodeAmqpFrame } from '../../src/codec/index.js';
import { encodeMessage } from '../../src/codec/message.js';
import { ProtocolConnection, type SenderLink } from '../../src/protocol/index.js';
import { flagValue } from './flag-value.js';
import { PacedRelease } from './paced-release.js';

const argv = process.argv.slice(2);
const pace = Number(flagValue(argv, '--pace') ?? 0);
const tickMs = Number(flagValue(argv, '--tick-ms') ?? 1);
const rate = pace > 0 ? pace : Number.POSITIVE_INFINITY;
const body = Buffer.alloc(1024, 0x61);

/** One transfer frame on channel `channel`, link `handle`. */
function transferFrame(channel: number, handle: number, deliveryId: number): Uint8Array {
  const tag = new Uint8Array(4);
  new DataView(tag.buffer).setUint32(0, deliveryId);
  const message = encodeMessage({ durable: true, messageId: `m-${deliveryId}`, body });
  const transfer = { handle, deliveryId, deliveryTag: tag, messageFormat: 0, settled: false };
  return encodeAmqpFrame(channel, { type: 'transfer', body: transfer }, message);
}

function serve(socket: Socket): void {
  socket.setNoDelay(true);
  socket.on('error', () => socket.destroy());
  const engine = new ProtocolConnection({ role: 'server', open: { containerId: 'paced-peer' } });
  const release = new PacedRelease(rate, tickMs, performance.now());
  /** the one link it feeds; undefined before the client's credit and after its close */
  let link: SenderLink | undefined;
  // the frames carry raw delivery ids the engine does not see, so its delivery-count stays 0 and
  // its link credit is the total the client allowed so far
  let sent = 0;
  const flushEngine = () => {
    for (const ev of engine.pollEvents()) {
      if (ev.type === 'attach-request') {
        ev.link.accept({ source: ev.attach.source, target: ev.attach.target, rcvSettleMode: 0 });
      } else if (ev.type === 'link-credit') {
        link = ev.link;
        if (!Number.isFinite(rate)) sendDue();
      } else if (ev.type === 'closed') {
        // the client ends the socket after our close reply; until then it may still settle
        link = undefined;
      }
    }
    for (const b of engine.takeOutput()) socket.write(b);
  };
  const sendDue = () => {
    if (link === undefined || socket.destroyed) return;
    const count = release.take(performance.now(), link.credit - sent);
    if (count === 0) return;
    const channel = link.session.channel;
    const frames = Array.from({ length: count }, (_, i) => transferFrame(channel, link!.handle, sent + i));
    sent += count;
    socket.write(Buffer.concat(frames));
  };
  const ticker = Number.isFinite(rate) ? setInterval(sendDue, tickMs) : undefined;
  socket.on('close', () => clearInterval(ticker));
  socket.on('data', (chunk) => {
    engine.receive(chunk);
    flushEngine();
  });
  flushEngine();
}

const server = createServer(serve);
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('paced peer: no port');
  process.stdout.write(`${JSON.stringify({ ready: true, amqpPort: address.port })}\n`);
});
process.on('SIGTERM', () => process.exit(0));
