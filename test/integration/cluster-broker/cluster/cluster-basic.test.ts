/**
 * A real 3-member cluster (startCluster -> `quorate-broker node` processes) used through rhea:
 * membership in every Open, the $cluster/membership feed, and messages sent on one member and
 * consumed on others, with competing consumers on two members never getting the same message.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterHandle } from '../../../../src/broker.js';
import { connect } from '../../../../src/index.js';
import {
  type CloseError,
  Collector,
  closeConn,
  open,
  url2port,
} from '../../../cluster-broker/cluster/amqp-helpers.js';
import {
  parseList,
  portOf,
  range,
  sendVia,
  startTestCluster,
  waitLeader,
  waitServing,
} from '../../../cluster-broker/cluster/cluster-support.js';
import { waitFor } from '../../../support/net.js';

let handle: ClusterHandle;
/** Each member's /readyz status the moment startCluster resolved. */
let readyzAtStart: number[] = [];

beforeAll(async () => {
  handle = await startTestCluster();
  readyzAtStart = await Promise.all(
    handle.httpUrls.map(async (url) => (await fetch(new URL('/readyz', url))).status),
  );
  await waitServing(handle);
});

afterAll(async () => {
  await handle?.stop();
});

describe('a 3-member cluster', () => {
  it('startCluster resolves once every member serves (a leader elected, everyone caught up)', () => {
    expect(readyzAtStart).toEqual([200, 200, 200]);
  });

  it('waitServing waits for a restarted member to serve again', async () => {
    const id = handle.ids[2]!;
    await handle.kill(id);
    await handle.restart(id);
    await handle.waitServing(id);
    const m = handle.members().find((x) => x.id === id)!;
    expect((await fetch(new URL('/readyz', m.httpUrl!))).status).toBe(200);
  });

  it('lists every member in each Open (failover-server-list) and offers quorate:membership', async () => {
    const leader = await waitLeader(handle);
    // the member restarted by the test before is quorate again in every member's view once its
    // status reached them (a heartbeat after it caught up), not necessarily the moment it serves
    await waitFor(
      async () => {
        for (const id of handle.ids) {
          const o = await open(portOf(handle, id));
          try {
            if (!parseList(o.properties?.['failover-server-list']).every((m) => m.quorate)) return false;
          } finally {
            await closeConn(o.conn);
          }
        }
        return true;
      },
      { timeoutMs: 30_000, what: 'every member quorate in every Open' },
    );
    for (const id of handle.ids) {
      const o = await open(portOf(handle, id));
      try {
        expect(o.offeredCapabilities).toContain('quorate:membership');
        const list = parseList(o.properties?.['failover-server-list']);
        expect(list.map((m) => m.id)).toEqual(['n1', 'n2', 'n3']);
        expect(list.map((m) => m.port)).toEqual(handle.ids.map((x) => portOf(handle, x)));
        for (const m of list) {
          expect(m.host).toBe('127.0.0.1');
          expect(m.scheme).toBe('amqp');
          expect(m.quorate).toBe(true);
        }
        expect(list.filter((m) => m.leader).map((m) => m.id)).toEqual([leader]);
      } finally {
        await closeConn(o.conn);
      }
    }
  });

  it('serves the membership list at $cluster/membership at once', async () => {
    const o = await open(portOf(handle, 'n2'));
    try {
      const feed = new Collector(o.conn, '$cluster/membership');
      await feed.until(1, 10_000);
      const list = parseList(JSON.parse(feed.bodies[0]!));
      expect(list.map((m) => m.id)).toEqual(['n1', 'n2', 'n3']);
    } finally {
      await closeConn(o.conn);
    }
  });

  it('a message sent via one member is received via another', async () => {
    const bodies = range('ab', 50);
    await sendVia(handle, 'n1', 'q-basic', bodies);
    const o = await open(portOf(handle, 'n3'));
    try {
      const c = new Collector(o.conn, 'q-basic');
      await c.until(50);
      expect(c.bodies).toEqual(bodies);
    } finally {
      await closeConn(o.conn);
    }
  });

  it('competing consumers on two members never get the same message', async () => {
    const a = await open(portOf(handle, 'n2'));
    const b = await open(portOf(handle, 'n3'));
    try {
      const ca = new Collector(a.conn, 'q-compete', { credit: 10 });
      const cb = new Collector(b.conn, 'q-compete', { credit: 10 });
      const bodies = range('c', 300);
      await sendVia(handle, 'n1', 'q-compete', bodies);
      const deadline = Date.now() + 30_000;
      while (ca.bodies.length + cb.bodies.length < 300 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
      }
      const all = [...ca.bodies, ...cb.bodies];
      expect(all.length).toBe(300);
      expect(new Set(all).size).toBe(300);
      expect(new Set(all)).toEqual(new Set(bodies));
      expect(ca.bodies.length).toBeGreaterThan(0);
      expect(cb.bodies.length).toBeGreaterThan(0);
    } finally {
      await closeConn(a.conn);
      await closeConn(b.conn);
    }
  });

  it('a message-id re-sent via another member is accepted and kept once (dedup at apply time)', async () => {
    const dedup = { dedup: true };
    await sendVia(handle, 'n1', 'q-dedup', ['d-1', 'd-2'], dedup);
    await sendVia(handle, 'n2', 'q-dedup', ['d-1', 'd-3'], dedup);
    await sendVia(handle, 'n3', 'q-dedup', ['d-2', 'd-3', 'd-4'], dedup);
    const o = await open(portOf(handle, 'n3'));
    try {
      const c = new Collector(o.conn, 'q-dedup');
      await c.until(4);
      await sendVia(handle, 'n1', 'q-dedup-end', ['x']); // one more round trip through the log
      expect([...c.bodies].sort()).toEqual(['d-1', 'd-2', 'd-3', 'd-4']);
    } finally {
      await closeConn(o.conn);
    }
  });

  it('a receiver re-attached on another member steals the link (amqp:link:stolen)', async () => {
    const first = await open(portOf(handle, 'n1'), 'stealing-container');
    const second = await open(portOf(handle, 'n2'), 'stealing-container');
    try {
      const old = new Collector(first.conn, 'q-steal', { name: 'the-link' });
      await sendVia(handle, 'n3', 'q-steal', ['s-1']);
      await old.until(1);
      const detached = new Promise<CloseError | undefined>((resolve) =>
        old.link.once('receiver_close', () => resolve(old.error)),
      );
      const fresh = new Collector(second.conn, 'q-steal', { name: 'the-link' });
      await sendVia(handle, 'n3', 'q-steal', ['s-2']);
      // s-1 may come first: the old link's accept of it may not have committed before the steal
      // released what that link held (an unsettled delivery is redelivered, never lost)
      await fresh.untilBody('s-2');
      const err = await detached;
      expect(err?.condition).toBe('amqp:link:stolen');
      expect(fresh.bodies.filter((b) => b === 's-2')).toEqual(['s-2']);
    } finally {
      await closeConn(first.conn);
      await closeConn(second.conn);
    }
  });
});

/**
 * A member acquires a consumer's messages through the log, so a drain usually meets an acquire
 * still in flight: the answer must wait for what it brings, on the leader and on followers.
 */
describe('drain on a member', () => {
  /** On each member in turn: 5 messages sent via the leader to a fresh queue, then `drainOn` them there. */
  async function onEachMember(
    client: string,
    drainOn: (url: string, queue: string, bodies: string[]) => Promise<void>,
  ): Promise<void> {
    const leader = await waitLeader(handle);
    for (const member of handle.members()) {
      const queue = `q-drain-${client}-${member.id}`;
      const bodies = range(`${client}-${member.id}`, 5);
      await sendVia(handle, leader, queue, bodies);
      await drainOn(member.url, queue, bodies);
    }
  }

  it('rhea: every message the queue holds arrives before the drain answer', async () => {
    await onEachMember('rhea', async (url, queue, bodies) => {
      const o = await open(url2port(url));
      try {
        const c = new Collector(o.conn, queue, { exactly: 0 });
        expect(await c.drain(10)).toBe(5);
        expect(c.bodies).toEqual(bodies);
        // nothing went missing with the answer: new credit finds the queue empty
        expect(await c.drain(10)).toBe(5);
      } finally {
        await closeConn(o.conn);
      }
    });
  });

  it('Qpid Proton Python: every message the queue holds arrives before the drain answer', async () => {
    await onEachMember('proton', async (url, queue, bodies) => {
      const { stdout } = await promisify(execFile)(
        '/usr/bin/python3',
        ['test/support/proton_drain.py', url, queue, '10'],
        { timeout: 60_000 },
      );
      expect(JSON.parse(stdout.trim().split('\n').pop()!)).toEqual({ received: bodies, credit: 0 });
    });
  });

  it('the quorate client: drain() resolves with every message the queue holds buffered', async () => {
    await onEachMember('client', async (url, queue, bodies) => {
      const conn = await connect({ urls: [url] });
      try {
        const r = await conn.openReceiver<string>(queue, { credit: 0 });
        r.addCredit(10);
        await r.drain();
        expect(r.buffered).toBe(5);
        const got = await r.receive({ max: 10 });
        expect(got.map((d) => d.message.body)).toEqual(bodies);
        await Promise.all(got.map((d) => d.accept()));
      } finally {
        await conn.close();
      }
    });
  });
});
