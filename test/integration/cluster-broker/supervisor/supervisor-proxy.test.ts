/**
 * LinkProxy and ProxyMesh over real loopback sockets: forwarding, cut/heal, black holes, delay
 * with order preserved, seeded resets, and the mesh's peer lists and partition shapes.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { LinkProxy } from '../../../../src/cluster-broker/netproxy/link-proxy.js';
import { ProxyMesh } from '../../../../src/cluster-broker/netproxy/proxy-mesh.js';
import { waitFor } from '../../../support/net.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** An echo server on a free loopback port. */
async function echoServer(): Promise<{ server: Server; port: number }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    socket.pipe(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  );
  const addr = server.address();
  return { server, port: typeof addr === 'object' && addr ? addr.port : 0 };
}

async function proxyTo(port: number, seed?: number): Promise<LinkProxy> {
  const proxy = new LinkProxy({ target: { host: '127.0.0.1', port }, seed });
  await proxy.listen();
  cleanups.push(() => proxy.close());
  return proxy;
}

/** A client socket that records what it receives and how it ended. */
interface Probe {
  socket: Socket;
  received: () => string;
  closed: Promise<{ hadError: boolean; code: string | undefined }>;
}

/** Dials `port`; the probe exists at once (a refused dial shows up as `closed` with an error). */
async function connect(port: number): Promise<Probe> {
  const socket = createConnection({ host: '127.0.0.1', port });
  let text = '';
  let errorCode: string | undefined;
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    text += chunk;
  });
  socket.on('error', (err: NodeJS.ErrnoException) => {
    errorCode = err.code;
  });
  const closed = new Promise<{ hadError: boolean; code: string | undefined }>((res) =>
    socket.on('close', (hadError) => res({ hadError, code: errorCode })),
  );
  cleanups.push(() => {
    socket.destroy();
  });
  return { socket, received: () => text, closed };
}

async function roundTrip(port: number, text: string): Promise<Probe> {
  const probe = await connect(port);
  probe.socket.write(text);
  await waitFor(() => probe.received() === text, {
    timeoutMs: 10_000,
    what: `echo of ${text}`,
    intervalMs: 5,
  });
  return probe;
}

describe('LinkProxy', () => {
  it('forwards both ways and counts bytes', async () => {
    const { port } = await echoServer();
    const proxy = await proxyTo(port);
    await roundTrip(proxy.port, 'hello');
    const stats = proxy.stats();
    expect(stats.bytesToTarget).toBe(5);
    expect(stats.bytesFromTarget).toBe(5);
    expect(stats.connectionsAccepted).toBe(1);
    expect(stats.activeConnections).toBe(1);
  });

  it('cut() resets existing connections and refuses new ones until heal()', async () => {
    const { port } = await echoServer();
    const proxy = await proxyTo(port);
    const before = await roundTrip(proxy.port, 'a');
    proxy.cut();
    const ended = await before.closed;
    expect(ended.hadError).toBe(true);
    expect(ended.code).toBe('ECONNRESET');

    const during = await connect(proxy.port);
    during.socket.write('lost');
    expect((await during.closed).hadError).toBe(true);
    expect(during.received()).toBe('');
    expect(proxy.stats().connectionsRefused).toBe(1);
    expect(proxy.stats().bytesToTarget).toBe(1);

    proxy.heal();
    await roundTrip(proxy.port, 'after');
  });

  it("cut('blackhole') holds new connections silent and drops them on heal()", async () => {
    const { port } = await echoServer();
    const proxy = await proxyTo(port);
    proxy.cut('blackhole');
    const held = await connect(proxy.port);
    held.socket.write('into the void');
    await waitFor(() => proxy.stats().connectionsRefused === 1, {
      timeoutMs: 10_000,
      what: 'held connection',
    });
    proxy.heal();
    await held.closed;
    expect(held.received()).toBe('');
    expect(proxy.stats().bytesToTarget).toBe(0);
    await roundTrip(proxy.port, 'back');
  });

  it("cut('blackhole') stalls an existing connection: nothing crosses until it is dropped", async () => {
    const { port } = await echoServer();
    const proxy = await proxyTo(port);
    const probe = await roundTrip(proxy.port, 'x');
    proxy.cut('blackhole');
    probe.socket.write('y');
    proxy.heal();
    await probe.closed;
    expect(probe.received()).toBe('x');
    expect(proxy.stats().bytesToTarget).toBe(1);
  });

  it('setDelay() holds chunks back and keeps their order when the delay shrinks', async () => {
    const { port } = await echoServer();
    const proxy = await proxyTo(port);
    const probe = await connect(proxy.port);
    proxy.setDelay(150);
    const started = Date.now();
    probe.socket.write('first;');
    await waitFor(() => proxy.stats().bytesHeld === 6, {
      timeoutMs: 10_000,
      what: 'chunk held',
      intervalMs: 2,
    });
    expect(proxy.stats().bytesToTarget).toBe(0);
    // Later chunks with no delay must still wait behind the delayed one.
    proxy.setDelay(0);
    const expected = ['first;'];
    for (let i = 0; i < 50; i++) {
      probe.socket.write(`${i};`);
      expected.push(`${i};`);
    }
    await waitFor(() => probe.received().length === expected.join('').length, {
      timeoutMs: 10_000,
      what: 'all echoes',
      intervalMs: 5,
    });
    expect(probe.received()).toBe(expected.join(''));
    // The first chunk was delayed on its way out; nothing overtook it.
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
  });

  it('setDelay() applies to each direction', async () => {
    const { port } = await echoServer();
    const proxy = await proxyTo(port);
    const probe = await connect(proxy.port);
    proxy.setDelay(100);
    const started = Date.now();
    probe.socket.write('ping');
    await waitFor(() => probe.received() === 'ping', { timeoutMs: 10_000, what: 'echo', intervalMs: 5 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
  });

  it('setResetProbability(1) resets a connection on its first chunk', async () => {
    const { port } = await echoServer();
    const proxy = await proxyTo(port);
    proxy.setResetProbability(1);
    const probe = await connect(proxy.port);
    probe.socket.write('doomed');
    const end = await probe.closed;
    expect(end.hadError).toBe(true);
    expect(proxy.stats().connectionsReset).toBe(1);
    expect(proxy.stats().bytesToTarget).toBe(0);
    proxy.setResetProbability(0);
    await roundTrip(proxy.port, 'fine');
  });

  it('random resets replay from the seed', async () => {
    const { port } = await echoServer();
    /** One message per connection, in sequence; returns which connections were reset. */
    const pattern = async (seed: number): Promise<boolean[]> => {
      const proxy = await proxyTo(port, seed);
      proxy.setResetProbability(0.5);
      const outcome: boolean[] = [];
      for (let i = 0; i < 16; i++) {
        const probe = await connect(proxy.port);
        probe.socket.write('m');
        const reset = await Promise.race([
          probe.closed.then(() => true),
          waitFor(() => probe.received() === 'm', { timeoutMs: 10_000, what: 'echo', intervalMs: 2 }).then(
            () => false,
          ),
        ]);
        outcome.push(reset);
        probe.socket.destroy();
      }
      return outcome;
    };
    const a = await pattern(42);
    const b = await pattern(42);
    expect(a).toEqual(b);
    expect(a).toContain(true);
    expect(a).toContain(false);
  });

  it('destroys the dialler when the target is down', async () => {
    const { server, port } = await echoServer();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const proxy = await proxyTo(port);
    const probe = await connect(proxy.port);
    await probe.closed;
    await waitFor(() => proxy.stats().activeConnections === 0, {
      timeoutMs: 10_000,
      what: 'connection dropped',
    });
  });
});

describe('ProxyMesh', () => {
  async function mesh(n: number): Promise<{ mesh: ProxyMesh; ports: number[]; ids: string[] }> {
    const ports: number[] = [];
    for (let i = 0; i < n; i++) ports.push((await echoServer()).port);
    const ids = ports.map((_, i) => `n${i + 1}`);
    const m = await ProxyMesh.start({ members: ids.map((id, i) => ({ id, clusterPort: ports[i]! })) });
    cleanups.push(() => m.close());
    return { mesh: m, ports, ids };
  }

  it('names its own real port for a member and a distinct proxy for every directed pair', async () => {
    const { mesh: m, ports } = await mesh(3);
    const n1 = m.peersFor('n1');
    expect(n1.map((p) => p.id)).toEqual(['n1', 'n2', 'n3']);
    expect(n1[0]).toEqual({ id: 'n1', host: '127.0.0.1', port: ports[0] });
    expect(n1[1]!.port).toBe(m.link('n1', 'n2').port);
    expect(m.link('n1', 'n2').port).not.toBe(m.link('n2', 'n1').port);
    expect(m.peersArg('n2')).toBe(
      `n1=127.0.0.1:${m.link('n2', 'n1').port},n2=127.0.0.1:${ports[1]},n3=127.0.0.1:${m.link('n2', 'n3').port}`,
    );
    // Traffic over proxy(n1->n2) lands on n2's port and is counted on that link only.
    await roundTrip(m.link('n1', 'n2').port, 'to n2');
    const stats = m.stats();
    expect(stats.find((s) => s.from === 'n1' && s.to === 'n2')!.bytesToTarget).toBe(5);
    expect(stats.filter((s) => s.bytesToTarget > 0)).toHaveLength(1);
  });

  it('partitions any shape (unnamed members together), rings, and heals', async () => {
    const { mesh: m, ids } = await mesh(5);
    const matrix = (): string =>
      ids.map((from) => ids.map((to) => (m.canReach(from, to) ? '1' : '0')).join('')).join(' ');

    m.partition([['n1'], ['n2', 'n3', 'n4', 'n5']]);
    expect(matrix()).toBe('10000 01111 01111 01111 01111');
    m.partition([
      ['n1', 'n2'],
      ['n3', 'n4', 'n5'],
    ]);
    expect(matrix()).toBe('11000 11000 00111 00111 00111');
    m.partition([['n1', 'n2', 'n3']]);
    expect(matrix()).toBe('11100 11100 11100 00011 00011');
    m.partition([['n1'], ['n2'], ['n3', 'n4']]);
    expect(matrix()).toBe('10000 01000 00110 00110 00001');
    m.ring();
    expect(matrix()).toBe('11001 11100 01110 00111 10011');
    m.heal();
    expect(matrix()).toBe('11111 11111 11111 11111 11111');
    m.cutLink('n1', 'n2');
    expect(m.canReach('n1', 'n2')).toBe(false);
    expect(m.canReach('n2', 'n1')).toBe(true);

    expect(() => m.partition([['n1'], ['n1', 'n2']])).toThrow(/two partition groups/);
    expect(() => m.partition([['n9']])).toThrow(/unknown member/);
  });

  it('a cut link really refuses traffic, other links keep flowing', async () => {
    const { mesh: m } = await mesh(3);
    const n1n2 = await roundTrip(m.link('n1', 'n2').port, 'a');
    m.partition([['n1'], ['n2', 'n3']]);
    await n1n2.closed;
    const refused = await connect(m.link('n1', 'n2').port);
    await refused.closed;
    await roundTrip(m.link('n2', 'n3').port, 'still');
    m.slow(50);
    const started = Date.now();
    await roundTrip(m.link('n3', 'n2').port, 'slow');
    expect(Date.now() - started).toBeGreaterThanOrEqual(90);
  });
});
