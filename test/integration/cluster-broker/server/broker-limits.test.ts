/**
 * Limits by default, over real sockets: the per-address connection cap, the per-connection caps
 * on links and auto-created queues (the connection stays usable), and owner-only data files
 * (a single node's store and a cluster member's data dir).
 */
import { chmod, mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMember } from '../../../../src/cluster-broker/assembly/index.js';
import {
  closeConnection,
  connect,
  connectExpectingClose,
  sendAll,
  TestReceiver,
} from '../../../cluster-broker/server/rhea-client.js';
import { withBroker } from '../../../support/broker.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'qb-limits-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Every path under `root` with its permission bits. */
async function modes(root: string): Promise<{ path: string; dir: boolean; mode: number }[]> {
  const out: { path: string; dir: boolean; mode: number }[] = [];
  const walk = async (p: string): Promise<void> => {
    const st = await stat(p);
    out.push({ path: p, dir: st.isDirectory(), mode: st.mode & 0o777 });
    if (st.isDirectory()) for (const e of await readdir(p)) await walk(join(p, e));
  };
  await walk(root);
  return out;
}

describe('caps', () => {
  it('connections from one address beyond the cap are refused (Open, then Close resource-limit-exceeded)', async () => {
    await withBroker({ maxConnectionsPerAddress: 2 }, async (b) => {
      const c1 = await connect({ port: b.port });
      const c2 = await connect({ port: b.port });
      const third = await connectExpectingClose({ port: b.port });
      expect(third.opened).toBe(true);
      expect(third.error?.condition).toBe('amqp:resource-limit-exceeded');
      expect(third.error?.description).toContain('from 127.0.0.1');
      await closeConnection(c2);
      const c3 = await connect({ port: b.port }); // room again once one closed
      await closeConnection(c3);
      await closeConnection(c1);
    });
  });

  it('links per connection: one more attach is refused at link level, the connection goes on', async () => {
    await withBroker({ maxLinksPerConnection: 2 }, async (b) => {
      const c = await connect({ port: b.port });
      const r1 = new TestReceiver(c, 'q1');
      const r2 = new TestReceiver(c, 'q2');
      await Promise.all([r1.opened, r2.opened]);
      const r3 = new TestReceiver(c, 'q3');
      await r3.until(() => r3.closedByPeer, 10_000, 'refusal');
      expect(r3.error?.condition).toBe('amqp:resource-limit-exceeded');
      r2.link.close();
      await r2.until(() => r2.closedByPeer || r2.link.is_closed(), 10_000, 'detach');
      expect((await sendAll(c, 'q1', [{ body: 'x' }]))[0]!.state).toBe('accepted');
      expect((await r1.next(1))[0]!.message.body).toBe('x');
      await closeConnection(c);
    });
  });

  it('auto-created queues per connection: a new name beyond the cap is refused, existing queues still attach', async () => {
    await withBroker({ maxQueuesPerConnection: 1 }, async (b) => {
      const c = await connect({ port: b.port });
      expect((await sendAll(c, 'first', [{ body: 1 }]))[0]!.state).toBe('accepted');
      await expect(sendAll(c, 'second', [{ body: 2 }])).rejects.toThrow(/resource-limit-exceeded/);
      expect((await sendAll(c, 'first', [{ body: 3 }]))[0]!.state).toBe('accepted');
      const other = await connect({ port: b.port }); // the cap is per connection
      expect((await sendAll(other, 'second', [{ body: 2 }]))[0]!.state).toBe('accepted');
      await closeConnection(other);
      await closeConnection(c);
    });
  });

  it('queues created on attach get the default byte limit (2 GiB)', async () => {
    await withBroker({}, async (b) => {
      const c = await connect({ port: b.port });
      await sendAll(c, 'bounded', [{ body: 1 }]);
      expect(b.backend.state.queueInfo('bounded')?.options.maxBytes).toBe(2 * 1024 * 1024 * 1024);
      await closeConnection(c);
    });
  });
});

describe('file modes', () => {
  it("a single node's data dir is 0700 and its files 0600, wider modes of an old store tightened", async () => {
    const data = join(dir, 'single');
    await mkdir(data, { mode: 0o755 });
    await writeFile(join(data, 'left-over'), 'x', { mode: 0o644 });
    await chmod(data, 0o755);
    await withBroker({ dataDir: data }, async (b) => {
      const c = await connect({ port: b.port });
      expect((await sendAll(c, 'modes', [{ body: 'm' }]))[0]!.state).toBe('accepted');
      await closeConnection(c);
    });
    const all = await modes(data);
    expect(all.filter((p) => !p.dir).length).toBeGreaterThan(1);
    for (const p of all)
      expect({ path: p.path, mode: p.mode }).toEqual({ path: p.path, mode: p.dir ? 0o700 : 0o600 });
  });

  it("a cluster member's data dir (raft log, snapshots, member addresses) is owner-only", async () => {
    const data = join(dir, 'member');
    const m = await startMember({
      id: 'n1',
      peers: { n1: { host: '127.0.0.1', port: 0 } },
      dataDir: data,
      port: 0,
    });
    try {
      await new Promise<void>((resolve) => {
        if (m.backend.serving) resolve();
        else m.backend.on('serving', (on) => on && resolve());
      });
      const c = await connect({ port: m.amqpPort });
      expect((await sendAll(c, 'modes', [{ body: 'm' }]))[0]!.state).toBe('accepted');
      await closeConnection(c);
    } finally {
      await m.stop();
    }
    const all = await modes(data);
    expect(all.filter((p) => !p.dir).length).toBeGreaterThan(0);
    for (const p of all)
      expect({ path: p.path, mode: p.mode }).toEqual({ path: p.path, mode: p.dir ? 0o700 : 0o600 });
  });
});
