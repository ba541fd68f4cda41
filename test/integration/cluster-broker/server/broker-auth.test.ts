/**
 * Users and permissions over real sockets: hashed users file (plaintext refused at start, the
 * passwd round trip), wrong passwords answered after a growing per-address delay and logged,
 * PLAIN refused over a plain socket when TLS is required, and link-level permissions (a denied
 * attach beside an allowed one on one connection, with our client and with rhea).
 */
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BrokerConfigError,
  type BrokerLogger,
  hashPassword,
  type PermissionsConfig,
  startBroker,
  startCluster,
} from '../../../../src/broker.js';
import type { CliInput } from '../../../../src/cluster-broker/cli/io.js';
import { runCli } from '../../../../src/cluster-broker/cli/run-cli.js';
import { connect as connectQuorate } from '../../../../src/index.js';
import {
  closeConnection,
  connect,
  sendAll,
  TestReceiver,
} from '../../../cluster-broker/server/rhea-client.js';
import { withBroker } from '../../../support/broker.js';

let dir: string;
let usersFile: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'qb-auth-'));
  usersFile = join(dir, 'users.txt');
  await writeFile(
    usersFile,
    `alice:${await hashPassword('s3cret')}\nbob:${await hashPassword('hunter2')}\ncarol:${await hashPassword('c')}\n`,
  );
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

interface Logged {
  obj: Record<string, unknown>;
  msg: string | undefined;
}

function capture(): { warn: Logged[]; info: Logged[]; logger: BrokerLogger } {
  const warn: Logged[] = [];
  const info: Logged[] = [];
  return {
    warn,
    info,
    logger: {
      warn: (obj: unknown, msg?: string) => warn.push({ obj: obj as Record<string, unknown>, msg }),
      info: (obj: unknown, msg?: string) => info.push({ obj: obj as Record<string, unknown>, msg }),
    },
  };
}

/** Time from dialing to the refusal of a login. */
async function timedFailure(port: number, username: string, password: string): Promise<number> {
  const t0 = performance.now();
  await expect(connect({ port, username, password })).rejects.toThrow();
  return performance.now() - t0;
}

describe('users file', () => {
  it('a plaintext line is refused at start, saying how to fix it (startBroker and the CLI)', async () => {
    const plain = join(dir, 'plain.txt');
    await writeFile(plain, `alice:${await hashPassword('x')}\nbob:hunter2\n`);
    await expect(startBroker({ port: 0, usersFile: plain })).rejects.toThrow(BrokerConfigError);
    await expect(startBroker({ port: 0, usersFile: plain })).rejects.toThrow(
      `line 2: the password of 'bob' is not a $scrypt$ hash`,
    );
    const err: string[] = [];
    const code = await runCli(['--port', '0', '--users', plain], {
      stdout: { write: () => true },
      stderr: { write: (s: string) => err.push(s) },
    });
    expect(code).toBe(1);
    expect(err.join('')).toContain(`quorate-broker passwd ${plain} bob`);
  });

  it('passwd reads the password from stdin, adds or replaces the line (0600); the broker accepts it', async () => {
    const file = join(dir, 'passwd-users.txt');
    const run = (user: string, input: string) =>
      runCli(['passwd', file, user], {
        stdout: { write: () => true },
        stderr: { write: () => true },
        stdin: Readable.from([input]) as unknown as CliInput,
      });
    expect(await run('dave', 'first-pw\n')).toBe(0);
    expect(await run('erin', 'erin-pw\n')).toBe(0);
    expect(await run('dave', 'second-pw\r\n')).toBe(0); // replaces dave's line
    const text = await readFile(file, 'utf8');
    expect(text.split('\n').filter((l) => l.startsWith('dave:'))).toHaveLength(1);
    expect(text).not.toContain('-pw'); // base64 has no '-': no password in clear
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await run('bad:name', 'x\n')).toBe(2);
    expect(await run('frank', '\n')).toBe(1); // empty password refused
    await withBroker({ usersFile: file, anonymous: false }, async (b) => {
      const c = await connect({ port: b.port, username: 'dave', password: 'second-pw' });
      await closeConnection(c);
      const e = await connect({ port: b.port, username: 'erin', password: 'erin-pw' });
      await closeConnection(e);
      await expect(connect({ port: b.port, username: 'dave', password: 'first-pw' })).rejects.toThrow();
    });
  });
});

describe('failed logins', () => {
  it('are answered after a delay that grows per address, logged at warn with user and address', async () => {
    const log = capture();
    const base = 60;
    await withBroker(
      {
        usersFile,
        anonymous: false,
        authThrottle: { baseDelayMs: base, halfLifeMs: 600_000 },
        logger: log.logger,
      },
      async (b) => {
        const took: number[] = [];
        for (let i = 0; i < 5; i++) took.push(await timedFailure(b.port, 'alice', `wrong-${i}`));
        // lower bounds only: attempt i waits about base * 2^i (less the decay of a few seconds
        // against a 10-minute half-life)
        for (let i = 0; i < 5; i++) expect(took[i]).toBeGreaterThanOrEqual(0.97 * base * 2 ** i);
        const failures = log.warn.filter((l) => l.msg === 'SASL authentication failed');
        expect(failures).toHaveLength(5);
        expect(failures[0]!.obj).toMatchObject({ user: 'alice', address: '127.0.0.1', mechanism: 'PLAIN' });
        const delays = failures.map((f) => f.obj.delayMs as number);
        for (let i = 0; i < 5; i++) expect(delays[i]).toBeGreaterThanOrEqual(0.97 * base * 2 ** i);
        // an unknown user is a failure like a wrong password
        await timedFailure(b.port, 'mallory', 'x');
        expect(log.warn.filter((l) => l.msg === 'SASL authentication failed').at(-1)!.obj).toMatchObject({
          user: 'mallory',
          address: '127.0.0.1',
        });
        // a correct login is not delayed behind a pending failure from the same address
        const order: string[] = [];
        const failing = timedFailure(b.port, 'alice', 'still-wrong').then(() =>
          order.push('failure answered'),
        );
        const ok = await connect({ port: b.port, username: 'alice', password: 's3cret' });
        order.push('good login open');
        await failing;
        expect(order).toEqual(['good login open', 'failure answered']);
        await closeConnection(ok);
      },
    );
  });

  it('--require-tls-for-plain: PLAIN is not offered over a plain socket; ANONYMOUS still is', async () => {
    await withBroker({ usersFile, requireTlsForPlain: true }, async (b) => {
      await expect(connect({ port: b.port, username: 'alice', password: 's3cret' })).rejects.toThrow();
      const anon = await connect({ port: b.port });
      await closeConnection(anon);
    });
    await withBroker({ usersFile }, async (b) => {
      // default without TLS: allowed
      const c = await connect({ port: b.port, username: 'alice', password: 's3cret' });
      await closeConnection(c);
    });
  });
});

const PERMISSIONS: PermissionsConfig = {
  users: {
    alice: { send: ['orders', 'events.*'], receive: ['orders'], monitor: true },
    bob: { send: ['bob.#'], receive: ['bob.#', 'events.*'] },
  },
  anonymous: { receive: ['public'] },
};

describe('permissions', () => {
  it('rhea: a denied attach beside an allowed one on one connection; the connection stays usable', async () => {
    await withBroker({ usersFile, permissions: PERMISSIONS }, async (b) => {
      const alice = await connect({ port: b.port, username: 'alice', password: 's3cret' });
      const allowed = await sendAll(alice, 'events.created', [{ body: 1 }]);
      expect(allowed[0]!.state).toBe('accepted');
      await expect(sendAll(alice, 'events.eu.created', [{ body: 2 }])).rejects.toThrow(/unauthorized-access/);
      await expect(sendAll(alice, 'bob.private', [{ body: 3 }])).rejects.toThrow(/unauthorized-access/);
      const denied = new TestReceiver(alice, 'events.created'); // alice may send there, not receive
      await denied.until(() => denied.closedByPeer, 10_000, 'refusal');
      expect(denied.error?.condition).toBe('amqp:unauthorized-access');
      expect(denied.error?.description).toContain("user 'alice' may not receive from 'events.created'");
      // same connection, still fine
      expect((await sendAll(alice, 'orders', [{ body: 'o1' }]))[0]!.state).toBe('accepted');
      const orders = new TestReceiver(alice, 'orders');
      expect((await orders.next(1))[0]!.message.body).toBe('o1');
      // every admitted connection may read the membership feed address (refused here only
      // because a single node serves no such feed: not-found, not unauthorized)
      const feed = new TestReceiver(alice, '$cluster/membership');
      await feed.until(() => feed.closedByPeer, 10_000, 'refusal');
      expect(feed.error?.condition).toBe('amqp:not-found');
      await closeConnection(alice);

      const bob = await connect({ port: b.port, username: 'bob', password: 'hunter2' });
      const events = new TestReceiver(bob, 'events.created');
      expect((await events.next(1))[0]!.message.body).toBe(1);
      const aliceOrders = new TestReceiver(bob, 'orders'); // bob drains alice's queue: refused
      await aliceOrders.until(() => aliceOrders.closedByPeer, 10_000, 'refusal');
      expect(aliceOrders.error?.condition).toBe('amqp:unauthorized-access');
      await closeConnection(bob);

      // carol is in the users file, not in the permissions: she may do nothing
      const carol = await connect({ port: b.port, username: 'carol', password: 'c' });
      await expect(sendAll(carol, 'orders', [{ body: 'c' }])).rejects.toThrow(/unauthorized-access/);
      await closeConnection(carol);

      // anonymous gets the "anonymous" entry
      const anon = await connect({ port: b.port });
      await expect(sendAll(anon, 'public', [{ body: 'p' }])).rejects.toThrow(/unauthorized-access/);
      const pub = new TestReceiver(anon, 'public');
      await pub.opened;
      await closeConnection(anon);
    });
  });

  it('our client: the denied link fails with amqp:unauthorized-access, the allowed one works on', async () => {
    await withBroker({ usersFile, permissions: PERMISSIONS }, async (b) => {
      const conn = await connectQuorate({
        urls: [b.url],
        username: 'alice',
        password: 's3cret',
        reconnect: false,
      });
      const allowed = await conn.openSender('orders');
      await expect(conn.openSender('secret')).rejects.toMatchObject({
        condition: 'amqp:unauthorized-access',
      });
      await expect(conn.openReceiver('events.created')).rejects.toMatchObject({
        condition: 'amqp:unauthorized-access',
      });
      expect((await allowed.send({ body: 'after' }, { timeoutMs: 10_000 })).state).toBe('accepted');
      const r = await conn.openReceiver('orders');
      for await (const d of r) {
        expect(d.message.body).toBe('after');
        await d.accept();
        break;
      }
      await conn.close();
    });
  });

  it('without a permissions file every user may do everything', async () => {
    await withBroker({ usersFile }, async (b) => {
      const carol = await connect({ port: b.port, username: 'carol', password: 'c' });
      expect((await sendAll(carol, 'anything.at.all', [{ body: 1 }]))[0]!.state).toBe('accepted');
      await closeConnection(carol);
    });
  });
});

describe('permissions on a cluster', () => {
  it('startCluster({ permissions }) reaches every member; $cluster/membership stays readable', async () => {
    const cluster = await startCluster({
      nodes: 1,
      usersFile,
      permissions: { users: { alice: { send: ['orders'], receive: ['orders'] } } },
    });
    try {
      const port = Number(new URL(cluster.urls[0]!).port);
      // a member refuses clients until it is quorate: retry alice's allowed send until it is
      for (let attempt = 0; ; attempt++) {
        try {
          const alice = await connect({ port, username: 'alice', password: 's3cret' });
          expect((await sendAll(alice, 'orders', [{ body: 2 }]))[0]!.state).toBe('accepted');
          await closeConnection(alice);
          break;
        } catch (err) {
          if (attempt >= 100) throw err;
          await new Promise((r) => setTimeout(r, 200));
        }
      }
      const carol = await connect({ port, username: 'carol', password: 'c' }); // listed nowhere
      const feed = new TestReceiver(carol, '$cluster/membership');
      expect((await feed.next(1)).length).toBe(1); // the feed is for every admitted connection
      await expect(sendAll(carol, 'orders', [{ body: 1 }])).rejects.toThrow(/unauthorized-access/);
      await closeConnection(carol);
    } finally {
      await cluster.stop();
    }
  });
});
