/**
 * A server that verified over TLS lists a member at amqp:// (no TLS), as an attacker who controls
 * one server (or its member list) would: the client keeps its user name and password off that
 * member. A plain TCP listener in front of a real AMQP peer (rhea, offering SASL PLAIN) records
 * every byte sent to it; across failovers it never sees the password, nor a connection at all
 * (docs/security.md#client-credentials-and-learned-members).
 */
import { createServer, connect as netConnect, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type Connection, connect } from '../../../src/index.js';
import { type RheaPeer, type RheaPeerOptions, startRheaPeer } from '../../client/rhea-peer.js';
import { freePort, waitFor } from '../../support/net.js';
import { useSelfSignedCert } from '../../support/tls.js';

const PASSWORD = 'alice-s3cret-pw';
const pem = useSelfSignedCert();
const peers: RheaPeer[] = [];
const conns: Connection[] = [];
const servers: Server[] = [];

async function peer(opts: RheaPeerOptions): Promise<RheaPeer> {
  const p = await startRheaPeer(opts);
  peers.push(p);
  return p;
}

/** A plain TCP listener forwarding to `port`, recording what clients send and how often they come. */
async function recorder(
  port: number,
): Promise<{ port: number; bytes: () => Buffer; connections: () => number }> {
  const chunks: Buffer[] = [];
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = createServer((client) => {
    connections++;
    const upstream = netConnect(port, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => sockets.delete(s));
    }
    client.on('data', (c: Buffer) => {
      chunks.push(c);
      upstream.write(c);
    });
    upstream.on('data', (c: Buffer) => client.write(c));
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  server.on('close', () => {
    for (const s of sockets) s.destroy();
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return { port: address.port, bytes: () => Buffer.concat(chunks), connections: () => connections };
}

afterEach(async () => {
  for (const c of conns.splice(0)) await c.close().catch(() => undefined);
  for (const p of peers.splice(0)) await p.stop().catch(() => undefined);
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});

describe('a TLS server listing an amqp:// member', () => {
  it('never gets the client to send its password in clear, across failovers', async () => {
    const plain = await peer({ plainUsers: { alice: PASSWORD } });
    const listener = await recorder(plain.port);
    const tlsPort = await freePort();
    const tlsPeer = await peer({
      port: tlsPort,
      tls: { key: pem.key, cert: pem.cert },
      plainUsers: { alice: PASSWORD },
      openProperties: {
        'failover-server-list': [
          { 'network-host': 'localhost', port: tlsPort, scheme: 'amqps' },
          { 'network-host': '127.0.0.1', port: listener.port, scheme: 'amqp' },
        ],
      },
    });
    const warnings: string[] = [];
    let connected = 0;
    const conn = await connect({
      urls: `amqps://localhost:${tlsPort}`,
      tls: { ca: pem.cert },
      username: 'alice',
      password: PASSWORD,
      randomizeMembers: false,
      reconnect: { initialDelayMs: 10, maxDelayMs: 50 },
      logger: { warn: (_o: unknown, msg?: string) => warnings.push(msg ?? '') },
    });
    conns.push(conn);
    conn.on('connected', () => connected++);
    expect(conn.members).toEqual([`amqps://localhost:${tlsPort}`]);
    expect(warnings.some((w) => /ignoring 1 learned member\(s\) with a weaker scheme/.test(w))).toBe(true);
    // failovers: with the plain member in the pool, the next pick would be it
    for (let round = 1; round <= 3; round++) {
      tlsPeer.killConnections();
      plain.killConnections(); // were the client there, it fails over again too
      await waitFor(() => connected >= round && conn.url !== undefined, {
        timeoutMs: 30_000,
        what: `reconnection ${round}`,
      });
      expect(conn.url).toBe(`amqps://localhost:${tlsPort}`);
    }
    expect(listener.connections()).toBe(0);
    expect(listener.bytes().includes(Buffer.from(PASSWORD))).toBe(false);
    expect(plain.users).toEqual([]);
  });
});
