/**
 * The transport encodes each turn's messages into one staging buffer and reuses it only once the
 * socket has written all of it (tcp-outbound.ts). Here the peer stops reading (a proxy in
 * between pauses), so writes stay queued in the sending socket across turns while new messages
 * are staged; once it reads again every message must arrive intact and in order, fragments of
 * messages larger than a frame included.
 */
import net from 'node:net';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { Entry, Message } from '../../../src/cluster-broker/replication/raft/types.js';
import { freePort, waitFor } from '../../support/net.js';
import { startMemberTransport, type TestMember } from './transport-fixture.js';

let running: TestMember[] = [];
let proxies: net.Server[] = [];
afterEach(async () => {
  await Promise.all(running.map((m) => m.transport.close()));
  for (const p of proxies) p.close();
  running = [];
  proxies = [];
});

/** Forwards to `port`; `hold(true)` stops reading from the dialler (its writes back up). */
async function pausableProxy(port: number) {
  const dialers: net.Socket[] = [];
  let held = false;
  const server = net.createServer((dialer) => {
    const target = net.connect(port, '127.0.0.1');
    dialer.on('close', () => target.destroy());
    dialer.on('data', (chunk) => target.write(chunk));
    target.pipe(dialer);
    dialer.on('error', () => target.destroy());
    target.on('error', () => dialer.destroy());
    dialers.push(dialer);
    if (held) dialer.pause();
  });
  proxies.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    /** Drops every proxied connection, both sides (the member dials again). */
    cut(): void {
      for (const d of dialers.splice(0)) d.destroy();
    },
    hold(on: boolean): void {
      held = on;
      for (const d of dialers) {
        if (on) d.pause();
        else d.resume();
      }
    },
  };
}

/** Entry data that differs for every (append, entry) and every byte, so a reused byte shows. */
function entryData(append: number, entry: number, size: number): Uint8Array {
  const out = new Uint8Array(size);
  for (let i = 0; i < size; i++) out[i] = (append * 31 + entry * 7 + i) % 251;
  return out;
}

function append(n: number, entries: number, size: number): Message {
  const list: Entry[] = [];
  for (let k = 0; k < entries; k++) list.push({ index: k + 1, term: 1, data: entryData(n, k, size) });
  return {
    type: 'append',
    from: 'n1',
    to: 'n2',
    term: 1,
    prevIndex: 0,
    prevTerm: 0,
    commit: n,
    entries: list,
  };
}

/**
 * n1 and n2 connected both ways, n1 through the proxy, with small frames (the larger appends are
 * cut into fragments inside the staging buffer).
 */
async function proxiedPair() {
  const ports = { n1: await freePort(), n2: await freePort() };
  const proxy = await pausableProxy(ports.n2);
  const maxFrame = 64 * 1024;
  const n1 = await startMemberTransport({ id: 'n1', ports, maxFrame, dialPorts: { n2: proxy.port } });
  const n2 = await startMemberTransport({ id: 'n2', ports, maxFrame });
  running.push(n1, n2);
  await waitFor(() => n1.transport.isConnected('n2') && n2.transport.isConnected('n1'), {
    timeoutMs: 20_000,
    what: 'both directions connected',
  });
  return { n1, n2, proxy };
}

describe('cluster transport staging', () => {
  it('writes queued in the socket across turns arrive intact and in order (reuse waits for the socket)', async () => {
    const { n1, n2, proxy } = await proxiedPair();
    proxy.hold(true);
    let sent = 0;
    // ~1 MiB a turn, 40 turns: the kernel's buffers fill after a few turns, then every later
    // turn stages while the socket still holds earlier turns' bytes. Each turn starts with a
    // small message (one frame) and goes on with appends of several frames and of one; the
    // sizes change from turn to turn, so no turn ends where an earlier one did
    const sizes = [100, 3, 20, 1, 57];
    const entriesOf = (t: number, k: number): number => (k === 0 ? 1 : sizes[(t + k) % sizes.length]! + t);
    for (let t = 0; t < 40; t++) {
      for (let k = 0; k < 5; k++) {
        n1.transport.send(append(sent, entriesOf(t, k), 2000));
        sent++;
      }
      await nextTurn();
    }
    proxy.hold(false);
    await waitFor(() => n2.got.length >= sent, { timeoutMs: 60_000, what: `${sent} appends received` });
    expect(n2.got.length).toBe(sent);
    n2.got.forEach((m, n) => {
      expect(m.type === 'append' && m.commit).toBe(n);
      if (m.type !== 'append') return;
      const t = Math.floor(n / 5);
      const k = n % 5;
      expect(m.entries.length).toBe(entriesOf(t, k));
      m.entries.forEach((e, k) => {
        expect(e.index).toBe(k + 1);
        expect(Buffer.from(e.data!).equals(Buffer.from(entryData(n, k, 2000)))).toBe(true);
      });
    });
  });

  it('after the connection drops and comes back, what is sent goes out whole', async () => {
    const { n1, n2, proxy } = await proxiedPair();
    const connected = () => n1.transport.isConnected('n2');
    // a large append, then a small one, so the staging buffer holds bytes when the link drops
    n1.transport.send(append(0, 50, 2000));
    n1.transport.send(append(1, 1, 2000));
    await waitFor(() => n2.got.length >= 2, { timeoutMs: 20_000, what: 'the first two appends' });
    proxy.cut();
    // n2 sees its connection from n1 close; n1 dials again at once (it may be back before a poll)
    await waitFor(() => n2.lost.includes('n1'), { timeoutMs: 20_000, what: 'the link seen down' });
    await waitFor(() => connected() && n2.transport.isConnected('n1'), {
      timeoutMs: 20_000,
      what: 'n1 connected to n2 again',
    });
    for (let n = 2; n < 6; n++) n1.transport.send(append(n, n % 2 === 0 ? 1 : 40, 2000));
    await waitFor(() => n2.got.length >= 6, { timeoutMs: 20_000, what: 'the appends after the reconnect' });
    n2.got.forEach((m, n) => {
      expect(m.type === 'append' && m.commit).toBe(n);
      if (m.type !== 'append') return;
      m.entries.forEach((e, k) => {
        expect(Buffer.from(e.data!).equals(Buffer.from(entryData(n, k, 2000)))).toBe(true);
      });
    });
  });
});
