/**
 * The adapter loop both roles run (src/protocol/engine-driver.ts): batches handed to the output
 * once per microtask or per turn, the output ended once the engine closed; a socket port that
 * writes a big batch whole and in order, and destroys a stream whose peer does not close after
 * end() within the grace.
 */
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { FrameReader } from '../../src/codec/index.js';
import { EngineDriver, type EngineOutput, ProtocolConnection, SocketPort } from '../../src/protocol/index.js';
import { waitFor } from '../support/net.js';

/** An output that keeps what it is given. */
function memoryOutput(): EngineOutput & { batches: Uint8Array[][]; ended: number } {
  const o = {
    batches: [] as Uint8Array[][],
    ended: 0,
    write: (chunks: Uint8Array[]) => {
      o.batches.push(chunks);
    },
    end: () => {
      o.ended++;
    },
  };
  return o;
}

/** What one batch holds, frame by frame: 'protocol-header' or the performative's name. */
function framesOf(batch: Uint8Array[]): string[] {
  const reader = new FrameReader({ maxFrameSize: 1 << 20 });
  reader.expectProtocolHeader();
  for (const c of batch) reader.push(c);
  const kinds: string[] = [];
  for (let f = reader.next(); f !== undefined; f = reader.next())
    kinds.push(f.kind === 'amqp' ? f.performative.type : f.kind);
  return kinds;
}

function driven(batch: 'microtask' | 'drained' | 'turn') {
  const engine = new ProtocolConnection({ role: 'client', open: { containerId: 'driver' }, now: 0 });
  const output = memoryOutput();
  const driver = new EngineDriver(engine, output, { onDeadline: () => undefined }, { clock: () => 0, batch });
  return { engine, output, driver };
}

describe('EngineDriver', () => {
  it('hands everything one synchronous block produced to the output as one batch, after the block', async () => {
    const { engine, output, driver } = driven('microtask');
    driver.scheduleFlush(); // the protocol header and Open
    engine.begin();
    driver.scheduleFlush();
    expect(output.batches).toHaveLength(0);
    await Promise.resolve();
    expect(output.batches).toHaveLength(1);
    expect(framesOf(output.batches[0]!)).toEqual(['protocol-header', 'open', 'begin']);
  });

  it("'turn' batching also takes what promise continuations of the same phase produced", async () => {
    const { engine, output, driver } = driven('turn');
    driver.scheduleFlush();
    await Promise.resolve().then(() => {
      engine.begin();
      driver.scheduleFlush();
    });
    expect(output.batches).toHaveLength(0);
    await new Promise((r) => setImmediate(r));
    expect(output.batches).toHaveLength(1);
    expect(framesOf(output.batches[0]!)).toEqual(['protocol-header', 'open', 'begin']);
  });

  it("'drained' batching waits for the promise chains the block started, however many hops", async () => {
    const { engine, output, driver } = driven('drained');
    driver.scheduleFlush(); // the protocol header and Open
    // a chain of continuations, as a `for await` loop settling buffered deliveries one hop apart
    let done!: () => void;
    const chainEnded = new Promise<void>((r) => {
      done = r;
    });
    let hops = 0;
    const hop = (): void => {
      engine.begin();
      driver.scheduleFlush();
      if (++hops < 5) void Promise.resolve().then(hop);
      else done();
    };
    void Promise.resolve().then(hop);
    await chainEnded;
    expect(output.batches).toHaveLength(0);
    await new Promise((r) => setImmediate(r));
    expect(output.batches).toHaveLength(1);
    expect(framesOf(output.batches[0]!)).toEqual(['protocol-header', 'open', ...Array(5).fill('begin')]);
  });

  it('ends the output once the engine closed, and only then', () => {
    const { engine, output, driver } = driven('microtask');
    driver.flush();
    expect(output.ended).toBe(0);
    engine.transportClosed();
    driver.flush();
    expect(output.ended).toBe(1);
  });
});

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

/** A TCP server on 127.0.0.1 that keeps what it receives and never ends its side; a socket to it. */
async function halfOpenPeer(): Promise<{ socket: net.Socket; received: () => Buffer }> {
  const got: Buffer[] = [];
  const server = net.createServer({ allowHalfOpen: true }, (s) => {
    s.on('data', (d: Buffer) => got.push(d));
    s.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as net.AddressInfo).port;
  const socket = net.connect({ host: '127.0.0.1', port });
  await new Promise<void>((r) => socket.once('connect', () => r()));
  cleanups.push(() => {
    socket.destroy();
    server.close();
  });
  return { socket, received: () => Buffer.concat(got) };
}

describe('SocketPort', () => {
  it('writes a batch over the join limit whole and in order', async () => {
    const peer = await halfOpenPeer();
    const port = new SocketPort(
      peer.socket,
      { clock: Date.now, endGraceMs: 10_000 },
      { data: () => undefined, error: () => undefined, close: () => undefined },
    );
    const chunks = [0, 1, 2].map((i) => new Uint8Array(40 * 1024).fill(i + 1));
    port.write(chunks);
    await waitFor(() => peer.received().length === 3 * 40 * 1024, { timeoutMs: 20_000, what: 'the batch' });
    expect(peer.received().equals(Buffer.concat(chunks))).toBe(true);
  });

  it('destroys the stream when the peer does not close within the grace after end()', async () => {
    const peer = await halfOpenPeer();
    let closed = 0;
    const port = new SocketPort(
      peer.socket,
      { clock: Date.now, endGraceMs: 50 },
      { data: () => undefined, error: () => undefined, close: () => closed++ },
    );
    port.end();
    port.end(); // a second end changes nothing
    await waitFor(() => closed === 1, { timeoutMs: 20_000, what: 'the stream destroyed after the grace' });
    expect(peer.socket.destroyed).toBe(true);
  });
});
