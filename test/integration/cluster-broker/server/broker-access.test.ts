import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../../../src/broker.js';
import { encodeMessage } from '../../../../src/codec/index.js';
import {
  closeConnection,
  closed,
  connect,
  connectExpectingClose,
  sendAll,
  TestReceiver,
} from '../../../cluster-broker/server/rhea-client.js';
import { ToggleBackend } from '../../../cluster-broker/server/toggle-backend.js';
import { withBroker } from '../../../support/broker.js';
import { selfSignedCert } from '../../../support/tls.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'qb-access-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('SASL', () => {
  it('PLAIN against a users file; --no-anonymous refuses ANONYMOUS', async () => {
    const users = join(dir, 'users.txt');
    await writeFile(
      users,
      `# test users\nalice:${await hashPassword('s3cret:with:colons')}\n\nbob:${await hashPassword('pw')}\n`,
    );
    await withBroker({ usersFile: users, anonymous: false }, async (b) => {
      const ok = await connect({ port: b.port, username: 'alice', password: 's3cret:with:colons' });
      expect((await sendAll(ok, 'sasl-q', [{ body: 1 }]))[0]!.state).toBe('accepted');
      await closeConnection(ok);
      await expect(connect({ port: b.port, username: 'alice', password: 'wrong' })).rejects.toThrow();
      await expect(connect({ port: b.port, username: 'nobody', password: 'pw' })).rejects.toThrow();
      await expect(connect({ port: b.port })).rejects.toThrow();
    });
  });

  it('ANONYMOUS is admitted by default', async () => {
    await withBroker({}, async (b) => {
      const c = await connect({ port: b.port });
      await closeConnection(c);
    });
  });
});

describe('TLS', () => {
  it('serves amqps with the given certificate and key', async () => {
    const { key, cert } = selfSignedCert(dir);
    const { readFile } = await import('node:fs/promises');
    await withBroker({ tls: { key: await readFile(key), cert: await readFile(cert) } }, async (b) => {
      expect(b.url.startsWith('amqps://')).toBe(true);
      const c = await connect({ port: b.port, tls: true });
      expect((await sendAll(c, 'tls-q', [{ body: 'secure' }]))[0]!.state).toBe('accepted');
      const r = new TestReceiver(c, 'tls-q');
      expect((await r.next(1))[0]!.message.body).toBe('secure');
      await closeConnection(c);
      // a plain client cannot talk to it
      await expect(connect({ port: b.port })).rejects.toThrow();
    });
  });
});

describe('limits', () => {
  it('refuses connections beyond the limit with resource-limit-exceeded, others unaffected', async () => {
    await withBroker({ maxConnections: 2 }, async (b) => {
      const c1 = await connect({ port: b.port });
      const c2 = await connect({ port: b.port });
      const third = await connectExpectingClose({ port: b.port });
      expect(third.opened).toBe(true);
      expect(third.error?.condition).toBe('amqp:resource-limit-exceeded');
      expect((await sendAll(c1, 'lim', [{ body: 1 }]))[0]!.state).toBe('accepted');
      await closeConnection(c2);
      const c3 = await connect({ port: b.port }); // room again
      await closeConnection(c3);
      await closeConnection(c1);
    });
  });

  it('per-queue limits reject with amqp:resource-limit-exceeded', async () => {
    await withBroker({ queueDefaults: { maxMessages: 2 } }, async (b) => {
      const c = await connect({ port: b.port });
      const outcomes = await sendAll(c, 'small', [{ body: 1 }, { body: 2 }, { body: 3 }]);
      expect(outcomes.map((o) => o.state)).toEqual(['accepted', 'accepted', 'rejected']);
      expect(outcomes[2]!.error?.condition).toBe('amqp:resource-limit-exceeded');
      await closeConnection(c);
    });
  });

  it('a message over max-message-size detaches the publisher link', async () => {
    await withBroker({ maxMessageSize: 10_000 }, async (b) => {
      const c = await connect({ port: b.port });
      await expect(sendAll(c, 'size', [{ body: Buffer.alloc(20_000) }])).rejects.toThrow(
        /message-size-exceeded/,
      );
      expect((await sendAll(c, 'size', [{ body: 'small' }]))[0]!.state).toBe('accepted');
      await closeConnection(c);
    });
  });

  it('keeps a connection that heartbeats within the idle timeout', async () => {
    await withBroker({ idleTimeoutMs: 300 }, async (b) => {
      // rhea answers our idle-time-out with heartbeats (the silent case: broker-hostile)
      const alive = await connect({ port: b.port });
      // nothing to wait for: the connection must stay open for three idle timeouts
      await new Promise((r) => setTimeout(r, 900));
      expect(alive.is_open()).toBe(true);
      await closeConnection(alive);
    });
  });

  it('heartbeats as often as a client with a short idle-time-out needs', async () => {
    await withBroker({}, async (b) => {
      const c = await connect({ port: b.port, idleTimeoutMs: 300 });
      const gone = closed(c);
      // nothing to wait for: the connection must outlive five of the client's idle timeouts
      const outcome = await Promise.race([
        gone.then(() => 'closed'),
        new Promise((r) => setTimeout(() => r('alive'), 1500)),
      ]);
      expect(outcome).toBe('alive');
      await closeConnection(c);
    });
  });

  it('with auto-create off, attaching to a missing queue is refused with amqp:not-found', async () => {
    await withBroker({ autoCreateQueues: false }, async (b) => {
      const c = await connect({ port: b.port });
      const r = new TestReceiver(c, 'missing');
      await r.until(() => r.closedByPeer, 5000, 'refusal');
      expect(r.error?.condition).toBe('amqp:not-found');
      await closeConnection(c);
    });
  });
});

describe('hooks for the cluster', () => {
  it('puts Open properties and offered capabilities from the caller in our Open', async () => {
    await withBroker(
      {
        openProperties: () => ({ 'quorate:member-id': 'n1' }),
        offeredCapabilities: () => ['quorate:membership'],
      },
      async (b) => {
        const c = await connect({ port: b.port });
        const open = (
          c as unknown as {
            remote: { open: { properties: Record<string, unknown>; offered_capabilities: unknown } };
          }
        ).remote.open;
        expect(open.properties['quorate:member-id']).toBe('n1');
        expect(JSON.stringify(open.offered_capabilities)).toContain('quorate:membership');
        await closeConnection(c);
      },
    );
  });

  it('serves a virtual source: the current state at once, then every change', async () => {
    const sinks = new Set<{ send(m: Uint8Array): void }>();
    let version = 1;
    const feed = {
      subscribe(sink: { send(m: Uint8Array): void }) {
        sinks.add(sink);
        sink.send(encodeMessage({ body: `v${version}` }));
        return () => sinks.delete(sink);
      },
    };
    await withBroker({ virtualSources: new Map([['$cluster/membership', feed]]) }, async (b) => {
      const c = await connect({ port: b.port });
      const r = new TestReceiver(c, '$cluster/membership');
      expect((await r.next(1))[0]!.message.body).toBe('v1');
      version = 2;
      for (const s of sinks) s.send(encodeMessage({ body: `v${version}` }));
      expect((await r.next(1))[0]!.message.body).toBe('v2');
      r.link.close();
      await r.until(() => sinks.size === 0, 5000, 'unsubscribe');
      // $-addresses are never auto-created as queues
      const missing = new TestReceiver(c, '$cluster/other');
      await missing.until(() => missing.closedByPeer, 5000, 'refusal');
      expect(missing.error?.condition).toBe('amqp:not-found');
      await closeConnection(c);
    });
  });

  it('not serving: new connections get Open then Close forced; existing ones are closed', async () => {
    const backend = new ToggleBackend();
    await withBroker({ backend }, async (b) => {
      const existing = await connect({ port: b.port });
      const gone = closed(existing);
      backend.setServing(false, 'not quorate (1 of 3 members reachable)');
      const err = await gone;
      expect(err?.condition).toBe('amqp:connection:forced');
      expect(err?.description).toContain('not quorate');
      const refused = await connectExpectingClose({ port: b.port });
      expect(refused.opened).toBe(true);
      expect(refused.error?.condition).toBe('amqp:connection:forced');
      expect(refused.error?.description).toContain('not quorate');
      backend.setServing(true);
      const back = await connect({ port: b.port });
      expect((await sendAll(back, 'after', [{ body: 1 }]))[0]!.state).toBe('accepted');
      await closeConnection(back);
    });
    await backend.close();
  });
});
