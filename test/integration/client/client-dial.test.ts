/**
 * The client's `dial` option against the reference broker: messages flow over a Unix domain
 * socket proxy, failover asks the dial for the next member, `amqps` runs TLS over the dialed
 * stream, and a dial that throws or rejects is the connect error's cause.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type Connection,
  type ConnectOptions,
  connect,
  type DialFunction,
  type DialTarget,
} from '../../../src/index.js';
import { withBroker } from '../../support/broker.js';
import { waitFor } from '../../support/net.js';
import { useSelfSignedCert } from '../../support/tls.js';

const pem = useSelfSignedCert();
/** Connections and servers a test opened that are still open when it ends (it failed). */
const opened: { close(): unknown }[] = [];
const dirs: string[] = [];
const LOCAL = { host: '127.0.0.1' };

afterEach(async () => {
  for (const o of opened.splice(0)) await Promise.resolve(o.close()).catch(() => undefined);
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** connect() with quick retries, in configured order; closed after the test if it is not. */
async function client(opts: ConnectOptions): Promise<Connection> {
  const conn = await connect({
    randomizeMembers: false,
    reconnect: { initialDelayMs: 20, maxDelayMs: 200 },
    ...opts,
  });
  opened.push(conn);
  return conn;
}

/** A socket connected to `options` (a TCP port or a Unix socket path), once it is. */
function connected(options: net.NetConnectOpts): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const s = net.connect(options);
    s.once('connect', () => {
      s.off('error', reject);
      resolve(s);
    });
    s.once('error', reject);
  });
}

/** A Unix domain socket that forwards every connection to the broker's TCP port. */
async function unixProxy(brokerPort: number): Promise<{ path: string; accepted: () => number }> {
  const dir = mkdtempSync(join(tmpdir(), 'quorate-dial-'));
  dirs.push(dir);
  const path = join(dir, 'amqp.sock');
  let accepted = 0;
  const server = net.createServer((local) => {
    accepted++;
    const remote = net.connect({ host: '127.0.0.1', port: brokerPort });
    local.pipe(remote).pipe(local);
    local.on('error', () => remote.destroy());
    remote.on('error', () => local.destroy());
    local.on('close', () => remote.destroy());
    remote.on('close', () => local.destroy());
  });
  opened.push(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => resolve());
  });
  return { path, accepted: () => accepted };
}

describe('custom dial', () => {
  it('runs AMQP over the stream the dial returns (a Unix domain socket to the broker)', async () => {
    await withBroker(LOCAL, async (b) => {
      const proxy = await unixProxy(b.port);
      const targets: DialTarget[] = [];
      const dial: DialFunction = (target) => {
        targets.push(target);
        return connected({ path: proxy.path });
      };
      // the URL's host is only a name handed to the dial: nothing resolves it
      const conn = await client({ urls: 'amqp://broker.invalid', dial });
      expect(targets).toEqual([{ scheme: 'amqp', host: 'broker.invalid', port: 5672 }]);
      expect(proxy.accepted()).toBe(1);
      const sender = await conn.openSender('dial-q');
      const receiver = await conn.openReceiver('dial-q');
      for (let i = 0; i < 20; i++) expect((await sender.send({ body: i })).state).toBe('accepted');
      for (let i = 0; i < 20; i++) {
        const d = await receiver.receive({ timeoutMs: 10_000 });
        expect(d.message.body).toBe(i);
        await d.accept();
      }
      expect(b.stats().queues.find((q) => q.name === 'dial-q')?.depth ?? 0).toBe(0);
      await conn.close();
    });
  });

  it('failover asks the dial for the next member', async () => {
    await withBroker(LOCAL, (a) =>
      withBroker(LOCAL, async (b) => {
        const ports: Record<string, number> = { 'member-a': a.port, 'member-b': b.port };
        const down = new Set<string>();
        const live: net.Socket[] = [];
        const asked: string[] = [];
        const dial: DialFunction = async (target) => {
          asked.push(target.host);
          if (down.has(target.host)) throw new Error(`${target.host} is down`);
          const s = await connected({ host: '127.0.0.1', port: ports[target.host]! });
          live.push(s);
          return s;
        };
        const conn = await client({ urls: ['amqp://member-a:5672', 'amqp://member-b:5672'], dial });
        expect(asked).toEqual(['member-a']);
        const sender = await conn.openSender('dial-fo');
        expect((await sender.send({ body: 'on a' })).state).toBe('accepted');
        down.add('member-a');
        for (const s of live.splice(0)) s.destroy();
        // sent once the connection runs over member-b's stream
        expect((await sender.send({ body: 'on b' }, { timeoutMs: 20_000 })).state).toBe('accepted');
        expect(asked).toContain('member-b');
        expect(asked.indexOf('member-b')).toBeGreaterThan(0);
        expect(a.stats().queues.find((q) => q.name === 'dial-fo')?.depth).toBe(1);
        await waitFor(() => b.stats().queues.find((q) => q.name === 'dial-fo')?.depth === 1, {
          timeoutMs: 10_000,
          what: "member-b's queue to hold the message",
        });
        const receiver = await conn.openReceiver('dial-fo');
        const d = await receiver.receive({ timeoutMs: 10_000 });
        expect(d.message.body).toBe('on b');
        await d.accept();
        await conn.close();
      }),
    );
  });

  it('amqps runs TLS over the dialed stream: verified with the CA, refused without it', async () => {
    await withBroker({ ...LOCAL, tls: { key: pem.key, cert: pem.cert } }, async (b) => {
      const dial: DialFunction = () => connected({ host: '127.0.0.1', port: b.port });
      const conn = await client({ urls: 'amqps://localhost', dial, tls: { ca: pem.cert } });
      const sender = await conn.openSender('dial-tls');
      expect((await sender.send({ body: 'secure' })).state).toBe('accepted');
      const err = await connect({ urls: 'amqps://localhost', dial, reconnect: false }).catch(
        (e: unknown) => e,
      );
      expect(err).toMatchObject({
        condition: 'quorate:connect-failed',
        cause: { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' },
      });
      await conn.close();
    });
  });

  it('a dial that throws or rejects is the connect error cause', async () => {
    const thrown = new Error('no route to the broker');
    const err = await connect({
      urls: 'amqp://broker.invalid',
      reconnect: false,
      dial: () => {
        throw thrown;
      },
    }).catch((e: unknown) => e);
    expect(err).toMatchObject({ condition: 'quorate:connect-failed' });
    expect((err as Error).cause).toBe(thrown);
    const rejected = new Error('proxy said no');
    const err2 = await connect({
      urls: 'amqp://broker.invalid',
      reconnect: false,
      dial: () => Promise.reject(rejected),
    }).catch((e: unknown) => e);
    expect(err2).toMatchObject({ condition: 'quorate:connect-failed' });
    expect((err2 as Error).cause).toBe(rejected);
  });

  it('a dial that never answers is bounded by the attempt timeout and told through its signal', async () => {
    let signal: AbortSignal | undefined;
    const err = await connect({
      urls: 'amqp://broker.invalid',
      reconnect: { maxAttempts: 1, attemptTimeoutMs: 300 },
      dial: (_target, s) => {
        signal = s;
        return new Promise<net.Socket>(() => undefined);
      },
    }).catch((e: unknown) => e);
    expect(err).toMatchObject({ condition: 'quorate:connect-failed' });
    expect(signal?.aborted).toBe(true);
  });
});
