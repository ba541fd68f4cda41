/**
 * The client's receive path alone, with no broker process: an in-process AMQP peer (the engine in
 * the server role) holds N pre-encoded 1 KiB messages and sends them as credit arrives, over an
 * in-memory stream whose chunks are cut as a TCP read would be (up to 64 KiB). Each round
 * receives them with credit `window`, each accepted, with our `for await` and our
 * `receive({ max })`, and prints the CPU time per received message. The peer's own work is in the
 * same process but small (its transfer frames are encoded beforehand; it only reads the client's
 * flows and dispositions), so compare the figures run against run, not against rhea's.
 *
 *   npm run bench -- receive-path [--messages N] [--window W] [--rounds R]
 *        [--frames-per-read F] [--only iterator|batch] [--profile file.cpuprofile]
 *
 * `--profile` writes a V8 CPU profile of the last round's measured receives.
 */
import { Duplex } from 'node:stream';
import { encodeAmqpFrame } from '../src/codec/index.js';
import { encodeMessage } from '../src/codec/message.js';
import { connect } from '../src/index.js';
import { type EngineEvent, ProtocolConnection } from '../src/protocol/index.js';
import { flagValue } from './lib/flag-value.js';
import { profiled } from './lib/profile.js';
import { receiveAccepting } from './lib/receive-loop.js';

const argv = process.argv.slice(2);
const value = (flag: string): string | undefined => flagValue(argv, flag);
const n = Number(value('--messages') ?? 20_000);
const window = Number(value('--window') ?? 1000);
const rounds = Number(value('--rounds') ?? 3);
const only = value('--only');
const profileFile = value('--profile');
/** the most bytes one read of the peer's stream hands over (a TCP read's 64 KiB) */
const READ_SIZE = 64 * 1024;
/** frames one read carries at most (default: as many as fit in READ_SIZE) */
const framesPerRead = Number(value('--frames-per-read') ?? Number.POSITIVE_INFINITY);

/**
 * The transfer frames a broker would send, encoded once (channel 0, handle 0: the peer's first
 * session and link): durable header, a message-id, 1 KiB of data, one frame each.
 */
function encodeAll(count: number): Uint8Array[] {
  const body = Buffer.alloc(1024, 0x61);
  return Array.from({ length: count }, (_, i) => {
    const tag = new Uint8Array(4);
    new DataView(tag.buffer).setUint32(0, i);
    const message = encodeMessage({ durable: true, messageId: `m-${i}`, body });
    const transfer = { handle: 0, deliveryId: i, deliveryTag: tag, messageFormat: 0, settled: false };
    return encodeAmqpFrame(0, { type: 'transfer', body: transfer }, message);
  });
}

/**
 * One in-memory connection: the client's side is a Duplex (its `dial`), the peer a server engine
 * for the handshake, attach and the client's flows, which then writes the ready frames itself as
 * far as the client's credit goes (the engine's delivery-count stays 0, so its view of the link
 * credit is the total the client allowed so far).
 */
function peerStream(frames: Uint8Array[]): Duplex {
  const engine = new ProtocolConnection({ role: 'server', open: { containerId: 'peer' } });
  let next = 0;
  const pending: Uint8Array[] = [];
  const onEvent = (ev: EngineEvent) => {
    if (ev.type === 'attach-request') {
      if (ev.link.handle !== 0 || ev.link.session.channel !== 0)
        throw new Error('peer: not handle 0 / channel 0');
      ev.link.accept({ source: ev.attach.source, target: ev.attach.target, rcvSettleMode: 0 });
    } else if (ev.type === 'link-credit') {
      while (next < ev.link.credit && next < frames.length) pending.push(frames[next++]!);
    }
  };
  // the peer's bytes reach the client one read per turn of the event loop, as from a socket: up to
  // 64 KiB, or (`--frames-per-read`) that many frames, as a broker writing each one apart gives
  let reading = false;
  const readTurn = () => {
    let size = 0;
    let count = 0;
    while (count < pending.length && count < framesPerRead && size + pending[count]!.length <= READ_SIZE) {
      size += pending[count]!.length;
      count++;
    }
    if (count === 0 && pending.length > 0) count = 1; // a frame over 64 KiB: one read of its own
    // a buffer of its own per read, as a socket hands out (not a slice of Node's pool)
    const read = Buffer.allocUnsafeSlow(size > 0 ? size : pending[0]!.length);
    let at = 0;
    for (const f of pending.splice(0, count)) {
      read.set(f, at);
      at += f.length;
    }
    if (pending.length > 0) setImmediate(readTurn);
    else reading = false;
    client.push(read);
  };
  const flushToClient = () => {
    for (const ev of engine.pollEvents()) onEvent(ev);
    for (const b of engine.takeOutput()) pending.push(b);
    if (reading || pending.length === 0) return;
    reading = true;
    setImmediate(readTurn);
  };
  let scheduled = false;
  const client: Duplex = new Duplex({
    read() {},
    write(chunk: Buffer, _enc, cb) {
      engine.receive(chunk);
      if (!scheduled) {
        scheduled = true;
        // answer on a later turn, as a peer across a socket would
        setImmediate(() => {
          scheduled = false;
          flushToClient();
        });
      }
      cb();
    },
    final(cb) {
      cb();
      client.push(null);
    },
  });
  return client;
}

/** Receives every message of one peer, each accepted; returns the CPU ms of the receive alone. */
async function receiveAll(mode: 'iterator' | 'batch', frames: Uint8Array[]): Promise<number> {
  const conn = await connect({
    urls: 'amqp://peer:5672',
    dial: async () => peerStream(frames),
    reconnect: false,
    unresponsiveTimeoutMs: false,
  });
  try {
    const receiver = await conn.openReceiver('q', { credit: window, confirmAccept: false });
    const c0 = process.cpuUsage();
    await receiveAccepting(receiver, frames.length, mode, window);
    const c = process.cpuUsage(c0);
    await receiver.close();
    return (c.user + c.system) / 1000;
  } finally {
    await conn.close();
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)] ?? 0;

export async function run(opts: { log?: (line: string) => void } = {}) {
  const log = opts.log ?? ((l: string) => process.stdout.write(`${l}\n`));
  const frames = encodeAll(n);
  const modes = (['iterator', 'batch'] as const).filter((m) => only === undefined || m === only);
  const us: Record<string, number[]> = { iterator: [], batch: [] };
  await receiveAll('batch', frames.slice(0, 2000)); // warm-up, not counted
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? modes : [...modes].reverse();
    for (const mode of order) {
      const last = round === rounds - 1 && profileFile !== undefined;
      const ms = await profiled(last ? profileFile : undefined, () => receiveAll(mode, frames));
      us[mode]!.push((ms * 1000) / n);
    }
  }
  const reads = Number.isFinite(framesPerRead) ? `${framesPerRead} frame(s) per read` : 'reads up to 64 KiB';
  log(
    `${n} x 1 KiB from an in-process peer, credit ${window}, ${reads}, ${rounds} round(s): client CPU us per message`,
  );
  for (const mode of modes) {
    log(`${mode}: median ${median(us[mode]!).toFixed(2)} (${us[mode]!.map((x) => x.toFixed(2)).join(', ')})`);
  }
  return us;
}
