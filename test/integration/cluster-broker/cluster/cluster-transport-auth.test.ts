/**
 * The cluster port's transport (real TcpTransports on loopback): mutual authentication over the
 * cluster secret, the member id bound to the authenticated connection, the pre-auth frame cap,
 * the handshake deadline, fragmentation of large messages, and mutual TLS.
 */
import { rmSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AppMessage } from '../../../../src/cluster-broker/cluster/peer-wire.js';
import { carry, withAppMessages } from '../../../../src/cluster-broker/cluster/peer-wire.js';
import type { Message } from '../../../../src/cluster-broker/replication/raft/types.js';
import { snapshotBytes } from '../../../../src/cluster-broker/replication/raft/types.js';
import { binaryWireCodec } from '../../../../src/cluster-broker/replication/wire-binary.js';
import { forgedFrames, impersonate } from '../../../cluster-broker/cluster/impostor.js';
import {
  header,
  makeTestPki,
  rawConnection,
  startMemberTransport,
  type TestMember,
  type TestPki,
} from '../../../cluster-broker/cluster/transport-fixture.js';
import { freePort, waitFor } from '../../../support/net.js';

const SECRET = Buffer.from('correct horse battery staple 42');
const WRONG = Buffer.from('incorrect horse battery staple 7');

let running: TestMember[] = [];
afterEach(async () => {
  await Promise.all(running.map((m) => m.transport.close()));
  running = [];
});

async function ports(...ids: string[]): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const id of ids) out[id] = await freePort();
  return out;
}

async function member(...args: Parameters<typeof startMemberTransport>): Promise<TestMember> {
  const m = await startMemberTransport(...args);
  running.push(m);
  return m;
}

const heartbeat = (from: string, to: string, commit: number): Message => ({
  type: 'heartbeat',
  from,
  to,
  term: 1,
  commit,
});

describe('cluster transport authentication', () => {
  it('members holding the secret connect both ways; a large snapshot travels in fragments', async () => {
    const p = await ports('n1', 'n2');
    const n1 = await member({ id: 'n1', ports: p, secret: SECRET });
    const n2 = await member({ id: 'n2', ports: p, secret: SECRET });
    await waitFor(() => n1.transport.isConnected('n2') && n2.transport.isConnected('n1'), {
      timeoutMs: 20_000,
      what: 'both directions authenticated',
    });
    const data = new Uint8Array(3 * 1024 * 1024 + 17).map((_, i) => i % 251);
    n1.transport.send({
      type: 'snapshot',
      from: 'n1',
      to: 'n2',
      term: 2,
      snapshot: { index: 9, term: 2, data },
    });
    n1.transport.send(heartbeat('n1', 'n2', 5));
    await waitFor(() => n2.got.length >= 2, { timeoutMs: 20_000, what: 'snapshot and heartbeat' });
    const snap = n2.got[0]!;
    expect(snap.type).toBe('snapshot');
    expect(
      snap.type === 'snapshot' && Buffer.from(snapshotBytes(snap.snapshot.data)).equals(Buffer.from(data)),
    ).toBe(true);
    expect(n2.got[1]).toEqual(heartbeat('n1', 'n2', 5));
  });

  it('drops and logs a message whose claimed sender is not the authenticated member', async () => {
    const p = await ports('n1', 'n2', 'n3');
    const apps: AppMessage[] = [];
    const n1 = await member({
      id: 'n1',
      ports: p,
      secret: SECRET,
      codec: withAppMessages(binaryWireCodec, (m) => apps.push(m)),
    });
    const n2 = await member({
      id: 'n2',
      ports: p,
      secret: SECRET,
      codec: withAppMessages(binaryWireCodec, () => {}),
    });
    await waitFor(() => n2.transport.isConnected('n1'), {
      timeoutMs: 20_000,
      what: 'n2 -> n1 authenticated',
    });
    // n2 is authenticated, and claims to be n3 on its own connection (a Raft message and a status)
    n2.transport.send(heartbeat('n3', 'n1', 99));
    const status = {
      host: '198.51.100.9',
      port: 1,
      scheme: 'amqp' as const,
      serving: true,
      leaderId: 'n3',
      term: 9,
      commitIndex: 9,
    };
    n2.transport.send(carry({ kind: 'status', from: 'n3', to: 'n1', status }));
    n2.transport.send(heartbeat('n2', 'n1', 7));
    n2.transport.send(carry({ kind: 'status', from: 'n2', to: 'n1', status }));
    await waitFor(() => n1.got.length >= 1 && apps.length >= 1, {
      timeoutMs: 20_000,
      what: 'the honest messages',
    });
    expect(n1.got).toEqual([heartbeat('n2', 'n1', 7)]);
    expect(apps.map((a) => a.from)).toEqual(['n2']);
    const drops = n1.warned('sender is not the authenticated member');
    expect(drops.length).toBeGreaterThanOrEqual(1);
    expect(drops[0]!.fields).toMatchObject({ peer: 'n2', claimed: 'n3' });
    expect(String(drops[0]!.fields.remote)).toMatch(/^127\.0\.0\.1:\d+$/);
  });

  it('refuses a member with a wrong secret or none, in both directions, and logs its address', async () => {
    const p = await ports('n1', 'n2', 'n3');
    const n1 = await member({ id: 'n1', ports: p, secret: SECRET });
    const n2 = await member({ id: 'n2', ports: p, secret: WRONG });
    const n3 = await member({ id: 'n3', ports: p });
    await waitFor(() => new Set(n1.warned('connecting peer').map((l) => l.fields.claimed)).size >= 2, {
      timeoutMs: 20_000,
      what: 'n1 refusing n2 and n3 repeatedly',
    });
    await waitFor(() => n2.warned('handshake with a member failed').length >= 2, {
      timeoutMs: 20_000,
      what: 'n2 refusing n1 (n1 cannot prove the secret n2 holds)',
    });
    expect(n1.transport.isConnected('n2')).toBe(false);
    expect(n1.transport.isConnected('n3')).toBe(false);
    expect(n2.transport.isConnected('n1')).toBe(false);
    expect(n3.transport.isConnected('n1')).toBe(false);
    n2.transport.send(heartbeat('n2', 'n1', 1));
    n3.transport.send(heartbeat('n3', 'n1', 1));
    const claimed = n1.warned('connecting peer').map((l) => l.fields.claimed);
    expect(new Set(claimed)).toEqual(new Set(['n2', 'n3']));
    for (const l of n1.warned('connecting peer'))
      expect(String(l.fields.remote)).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(n1.got).toEqual([]);
  });

  it("refuses the probe's forged frames from an impostor with the right ids and no or a wrong secret", async () => {
    const p = await ports('n1', 'n2');
    const n1 = await member({
      id: 'n1',
      ports: p,
      secret: SECRET,
      codec: withAppMessages(binaryWireCodec, () => {}),
    });
    for (const secret of [undefined, WRONG]) {
      const out = await impersonate({
        port: p.n1!,
        clusterId: 'test-cluster',
        victim: 'n1',
        claimed: 'n2',
        secret,
        frames: forgedFrames('n1', 'n2', 'orders'),
      });
      expect(out).toEqual({ challenged: true, accepted: false, closedByMember: true });
    }
    expect(n1.got).toEqual([]);
  });

  it('accepts only configured member ids, even without a secret (no inherited names)', async () => {
    const p = await ports('n1', 'n2');
    const n1 = await member({ id: 'n1', ports: p });
    for (const claimed of ['toString', 'constructor', 'n9']) {
      const out = await impersonate({
        port: p.n1!,
        clusterId: 'test-cluster',
        victim: 'n1',
        claimed,
        secret: undefined,
        frames: [],
      });
      expect(out).toEqual({ challenged: false, accepted: false, closedByMember: true });
    }
    expect(n1.warned('connecting peer refused').map((l) => l.fields.claimed)).toEqual([
      'toString',
      'constructor',
      'n9',
    ]);
  });

  it('refuses an oversized frame before authentication at its header', async () => {
    const p = await ports('n1', 'n2');
    const n1 = await member({ id: 'n1', ports: p, secret: SECRET });
    const huge = await rawConnection(p.n1!, header(256 * 1024 * 1024), { stream: 16 * 1024 * 1024 });
    expect(huge.closedByMember).toBe(true);
    // just over the handshake's cap (a hello is a few hundred bytes at most)
    const over = await rawConnection(p.n1!, Buffer.concat([header(257), Buffer.alloc(257)]));
    expect(over.closedByMember).toBe(true);
    const refusals = n1.warned('connecting peer sent a bad handshake');
    expect(refusals.map((l) => l.fields.remote)).toEqual([
      `127.0.0.1:${huge.localPort}`,
      `127.0.0.1:${over.localPort}`,
    ]);
    expect(String((refusals[0]!.fields.err as Error).message)).toMatch(/exceeds 256/);
  });

  it('closes a stalled handshake within 2 s and logs its address', async () => {
    const p = await ports('n1', 'n2');
    const n1 = await member({ id: 'n1', ports: p, secret: SECRET });
    const silent = await rawConnection(p.n1!, new Uint8Array(0), { waitMs: 15_000 });
    const partial = await rawConnection(p.n1!, Buffer.concat([header(100), Buffer.alloc(10)]), {
      waitMs: 15_000,
    });
    for (const c of [silent, partial]) {
      expect(c.closedByMember).toBe(true);
      // the deadline is 1.8 s; the slack is for timers late on a loaded machine
      expect(c.elapsedMs).toBeLessThan(2_000 + 1_000);
    }
    expect(n1.warned('did not authenticate in time').map((l) => l.fields.remote)).toEqual([
      `127.0.0.1:${silent.localPort}`,
      `127.0.0.1:${partial.localPort}`,
    ]);
  });
});

describe('cluster transport mutual TLS', () => {
  let pki: TestPki;
  beforeAll(() => {
    pki = makeTestPki();
  });
  afterAll(() => rmSync(pki.dir, { recursive: true, force: true }));

  it('members with certificates of the cluster CA connect and exchange messages', async () => {
    const p = await ports('n1', 'n2');
    const n1 = await member({ id: 'n1', ports: p, secret: SECRET, tls: pki.good });
    const n2 = await member({ id: 'n2', ports: p, secret: SECRET, tls: pki.good });
    await waitFor(() => n1.transport.isConnected('n2') && n2.transport.isConnected('n1'), {
      timeoutMs: 30_000,
      what: 'both directions over TLS',
    });
    n2.transport.send(heartbeat('n2', 'n1', 3));
    await waitFor(() => n1.got.length >= 1, { timeoutMs: 20_000, what: 'a message over TLS' });
    expect(n1.got).toEqual([heartbeat('n2', 'n1', 3)]);
  });

  it('refuses a peer whose certificate another CA signed, and one without TLS', async () => {
    const p = await ports('n1', 'n2', 'n3');
    const n1 = await member({ id: 'n1', ports: p, secret: SECRET, tls: pki.good });
    // right secret, wrong certificate: TLS alone keeps it out
    const n2 = await member({ id: 'n2', ports: p, secret: SECRET, tls: pki.rogue });
    await waitFor(() => n1.warned('TLS handshake with a connecting peer failed').length >= 2, {
      timeoutMs: 30_000,
      what: 'n1 refusing the rogue certificate',
    });
    expect(n1.transport.isConnected('n2')).toBe(false);
    expect(n2.transport.isConnected('n1')).toBe(false);
    // plain TCP speaking the handshake with the right secret gets no challenge
    const plain = await impersonate({
      port: p.n1!,
      clusterId: 'test-cluster',
      victim: 'n1',
      claimed: 'n3',
      secret: SECRET,
      frames: [],
    });
    expect(plain.challenged).toBe(false);
    expect(plain.closedByMember).toBe(true);
    expect(n1.got).toEqual([]);
  });
});
