/**
 * Attacks by an ordinary account on another's identity and on the anonymous relay
 * (docs/security.md#identity), over real sockets with our client and rhea, against a single node
 * with users, permissions and no anonymous login. alice may use `orders` and `orders.events`;
 * bob only `bob.#`, and may read `events.*`. bob:
 * - attaches under alice's container-id and link name: to a topic he may read (alice's durable
 *   subscription must survive with its messages), as a dynamic node (alice's reply queue must stay
 *   hers) and as a consumer of his own queue (alice's link must not be stolen); carol, who may
 *   read reply queues by address, still may not read alice's;
 * - relays through a null-target sender: to `orders` (refused, the link usable), to more new
 *   queues than the per-connection cap allows, to a name over the address limit.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword, type PermissionsConfig } from '../../../../src/broker.js';
import type { BrokerNode } from '../../../../src/cluster-broker/assembly/index.js';
import { connect as connectQuorate, type Receiver } from '../../../../src/index.js';
import {
  closeConnection,
  connect,
  type RheaConnection,
  sendAll,
  TestReceiver,
} from '../../../cluster-broker/server/rhea-client.js';
import { withBroker } from '../../../support/broker.js';

const PERMISSIONS: PermissionsConfig = {
  users: {
    // alice answers requests on reply queues ($temp/...) too
    alice: { send: ['orders', 'orders.events', '$temp/#'], receive: ['orders', 'orders.events'] },
    bob: { send: ['bob.#'], receive: ['bob.#', 'events.*'] },
    // may read every reply queue by its address: the owner check still keeps alice's hers
    carol: { receive: ['$temp/#'] },
  },
};
/** The container-id both users claim. */
const SHARED_ID = 'shared-app';
const PASSWORDS = { alice: 'alice-pw', bob: 'bob-pw', carol: 'carol-pw' } as const;
type User = keyof typeof PASSWORDS;

let dir: string;
let usersFile: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'qb-identity-'));
  usersFile = join(dir, 'users.txt');
  await writeFile(
    usersFile,
    `alice:${await hashPassword(PASSWORDS.alice)}\nbob:${await hashPassword(PASSWORDS.bob)}\ncarol:${await hashPassword(PASSWORDS.carol)}\n`,
  );
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function withSecuredBroker(
  fn: (b: BrokerNode) => Promise<void>,
  extra: Parameters<typeof withBroker>[0] = {},
): Promise<void> {
  return withBroker({ usersFile, permissions: PERMISSIONS, anonymous: false, ...extra }, fn);
}

const rheaAs = (b: BrokerNode, user: User, containerId = SHARED_ID): Promise<RheaConnection> =>
  connect({ port: b.port, username: user, password: PASSWORDS[user], containerId });

const depth = (b: BrokerNode, queue: string): number =>
  b.stats().queues.find((q) => q.name === queue)?.depth ?? 0;

/** The next `n` bodies of `r`, each accepted. */
async function bodies(r: Receiver, n: number): Promise<unknown[]> {
  const out: unknown[] = [];
  for (let i = 0; i < n; i++) {
    const d = await r.receive({ timeoutMs: 10_000 });
    out.push(d.message.body);
    await d.accept();
  }
  return out;
}

describe("another user's names", () => {
  it("bob's attach under alice's container-id and subscription name is refused; her durable subscription keeps its 100 messages", async () => {
    await withSecuredBroker(async (b) => {
      const alice = await connectQuorate({
        urls: b.url,
        username: 'alice',
        password: PASSWORDS.alice,
        containerId: SHARED_ID,
        reconnect: false,
      });
      try {
        const durable = { topic: true, durable: true, subscription: 'audit' } as const;
        await (await alice.openReceiver('orders.events', durable)).close(); // detach: the subscription stays
        const publisher = await alice.openSender('orders.events', { topic: true });
        for (let i = 0; i < 100; i++) {
          expect((await publisher.send({ body: i }, { timeoutMs: 10_000 })).state).toBe('accepted');
        }
        const queue = `$sub/${SHARED_ID}/audit`;
        expect(depth(b, queue)).toBe(100);

        const bob = await connectQuorate({
          urls: b.url,
          username: 'bob',
          password: PASSWORDS.bob,
          containerId: SHARED_ID,
          reconnect: false,
        });
        try {
          // a topic bob may read, under alice's names: it would replace her subscription
          await expect(bob.openReceiver('events.audit', durable)).rejects.toMatchObject({
            condition: 'amqp:unauthorized-access',
          });
          // nor may he read it as a non-durable subscription
          await expect(
            bob.openReceiver('events.audit', { topic: true, subscription: 'audit' }),
          ).rejects.toMatchObject({ condition: 'amqp:unauthorized-access' });
        } finally {
          await bob.close();
        }
        expect(depth(b, queue)).toBe(100);
        const resumed = await alice.openReceiver('orders.events', durable);
        expect(await bodies(resumed, 100)).toEqual(Array.from({ length: 100 }, (_, i) => i));
      } finally {
        await alice.close();
      }
    });
  });

  it("bob's dynamic attach under alice's names gets a node of his own; alice keeps her reply queue and reads her 5 replies", async () => {
    await withSecuredBroker(async (b) => {
      const alice = await rheaAs(b, 'alice');
      const bob = await rheaAs(b, 'bob');
      try {
        const dynamic = { name: 'replies', source: { dynamic: true } };
        const aliceReplies = new TestReceiver(alice, '', dynamic);
        await aliceReplies.opened;
        const address = String(aliceReplies.link.source?.address);
        expect(address.startsWith('$temp/')).toBe(true);
        const replies = [1, 2, 3, 4, 5].map((body) => ({ body }));
        expect((await sendAll(alice, address, replies)).map((o) => o.state)).toEqual(
          replies.map(() => 'accepted'),
        );

        const bobReplies = new TestReceiver(bob, '', dynamic);
        await bobReplies.opened;
        expect(String(bobReplies.link.source?.address)).not.toBe(address);
        // alice's link was not stolen, and every reply is still hers
        const got = await aliceReplies.next(5);
        expect(got.map((r) => r.message.body)).toEqual([1, 2, 3, 4, 5]);
        expect(aliceReplies.closedByPeer).toBe(false);
        // bob cannot read it by its address either (no permission; and it is alice's)
        const byAddress = new TestReceiver(bob, address);
        await byAddress.until(() => byAddress.closedByPeer, 10_000, 'refusal');
        expect(byAddress.error?.condition).toBe('amqp:unauthorized-access');
        // carol may read reply queues by address, but this one is alice's
        const carol = await rheaAs(b, 'carol', 'carol-app');
        try {
          const carols = new TestReceiver(carol, address);
          await carols.until(() => carols.closedByPeer, 10_000, 'refusal');
          expect(carols.error?.condition).toBe('amqp:unauthorized-access');
          expect(carols.error?.description).toContain('belongs to another user');
        } finally {
          await closeConnection(carol);
        }
      } finally {
        await closeConnection(bob);
        await closeConnection(alice);
      }
    });
  });

  it("bob's consumer under alice's container-id and link name does not steal her link; her own second connection does", async () => {
    await withSecuredBroker(async (b) => {
      const alice = await rheaAs(b, 'alice');
      const bob = await rheaAs(b, 'bob');
      const aliceAgain = await rheaAs(b, 'alice');
      try {
        const work = new TestReceiver(alice, 'orders', { name: 'work' });
        await work.opened;
        expect((await sendAll(alice, 'orders', [{ body: 'first' }]))[0]!.state).toBe('accepted');
        const [held] = await work.next(1); // held unsettled by alice's link
        expect(held!.message.body).toBe('first');

        const bobs = new TestReceiver(bob, 'bob.inbox', { name: 'work' });
        await bobs.opened;
        expect((await sendAll(alice, 'orders', [{ body: 'second' }]))[0]!.state).toBe('accepted');
        expect((await work.next(1))[0]!.message.body).toBe('second');
        expect(work.closedByPeer).toBe(false);
        held!.delivery.accept();

        // the same user re-attaching (a failover) still takes the link over
        const successor = new TestReceiver(aliceAgain, 'orders', { name: 'work' });
        await successor.opened;
        await work.until(() => work.closedByPeer, 10_000, 'the stolen detach');
        expect(work.error?.condition).toBe('amqp:link:stolen');
      } finally {
        await closeConnection(aliceAgain);
        await closeConnection(bob);
        await closeConnection(alice);
      }
    });
  });
});

describe('the anonymous relay is a sender like any other', () => {
  /** A null-target sender (ANONYMOUS-RELAY): each message goes where its `to` says. */
  const relay = { target: {} };

  it("bob's relayed messages to orders are rejected unauthorized-access; the link stays usable; orders stays empty", async () => {
    await withSecuredBroker(async (b) => {
      const bob = await rheaAs(b, 'bob', 'bob-app');
      try {
        const outcomes = await sendAll(
          bob,
          '',
          [
            { to: 'orders', body: 'forged 1' },
            { to: 'bob.inbox', body: 'mine' },
            { to: 'orders', body: 'forged 2' },
            { to: 'orders', body: 'forged 3' },
            { to: 'bob.inbox', body: 'mine again' },
          ],
          relay,
        );
        expect(outcomes.map((o) => o.state)).toEqual([
          'rejected',
          'accepted',
          'rejected',
          'rejected',
          'accepted',
        ]);
        for (const i of [0, 2, 3]) {
          expect(outcomes[i]!.error?.condition).toBe('amqp:unauthorized-access');
          expect(outcomes[i]!.error?.description).toContain("user 'bob' may not send to 'orders'");
        }
        expect(depth(b, 'orders')).toBe(0);
        expect(depth(b, 'bob.inbox')).toBe(2);
      } finally {
        await closeConnection(bob);
      }
    });
  });

  it('queues the relay creates count toward the per-connection cap, shared with attaches', async () => {
    await withSecuredBroker(
      async (b) => {
        const bob = await rheaAs(b, 'bob', 'bob-app');
        try {
          const to = ['bob.q1', 'bob.q2', 'bob.q3', 'bob.q4', 'bob.q1', 'bob.q5'];
          const outcomes = await sendAll(
            bob,
            '',
            to.map((address, i) => ({ to: address, body: i })),
            relay,
          );
          expect(outcomes.map((o) => o.state)).toEqual([
            'accepted',
            'accepted',
            'accepted',
            'rejected',
            'accepted', // an existing queue: nothing created
            'rejected',
          ]);
          expect(outcomes[3]!.error?.condition).toBe('amqp:resource-limit-exceeded');
          expect(b.backend.state.hasQueue('bob.q4')).toBe(false);
          // the cap is the connection's: an attach to a new name is refused as well
          await expect(sendAll(bob, 'bob.q6', [{ body: 'x' }])).rejects.toThrow(/resource-limit-exceeded/);
        } finally {
          await closeConnection(bob);
        }
      },
      { maxQueuesPerConnection: 3 },
    );
  });

  it('a relayed `to` longer than the address limit is rejected invalid-field and creates nothing', async () => {
    await withSecuredBroker(async (b) => {
      const bob = await rheaAs(b, 'bob', 'bob-app');
      try {
        const long = `bob.${'n'.repeat(2_000)}`;
        const outcomes = await sendAll(
          bob,
          '',
          [
            { to: long, body: 'x' },
            { to: 'bob.short', body: 'y' },
          ],
          relay,
        );
        expect(outcomes.map((o) => o.state)).toEqual(['rejected', 'accepted']);
        expect(outcomes[0]!.error?.condition).toBe('amqp:invalid-field');
        expect(b.backend.state.hasQueue(long)).toBe(false);
      } finally {
        await closeConnection(bob);
      }
    });
  });
});
