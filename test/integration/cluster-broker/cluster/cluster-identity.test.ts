/**
 * Identity scoped by user on a real 3-member cluster (docs/security.md#identity): the owner is in
 * the replicated state, so bob attacking through another member than the one alice uses, under
 * her container-id and link names, neither replaces her durable subscription, nor takes her
 * dynamic node, nor steals her consumer link (the cross-member claim carries the user).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ClusterHandle, hashPassword } from '../../../../src/broker.js';
import { connect as connectQuorate } from '../../../../src/index.js';
import { portOf, startTestCluster, waitServing } from '../../../cluster-broker/cluster/cluster-support.js';
import {
  closeConnection,
  connect,
  type RheaConnection,
  sendAll,
  TestReceiver,
} from '../../../cluster-broker/server/rhea-client.js';

const PASSWORDS = { alice: 'alice-pw', bob: 'bob-pw' } as const;
type User = keyof typeof PASSWORDS;
const SHARED_ID = 'shared-cluster-app';

let dir: string;
let handle: ClusterHandle;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'qb-cluster-identity-'));
  const usersFile = join(dir, 'users.txt');
  await writeFile(
    usersFile,
    `alice:${await hashPassword(PASSWORDS.alice)}\nbob:${await hashPassword(PASSWORDS.bob)}\n`,
  );
  handle = await startTestCluster({
    usersFile,
    permissions: {
      users: {
        alice: { send: ['orders', 'orders.events', '$temp/#'], receive: ['orders', 'orders.events'] },
        bob: { send: ['bob.#'], receive: ['bob.#', 'events.*'] },
      },
    },
  });
  await waitServing(handle);
});
afterAll(async () => {
  await handle?.stop();
  await rm(dir, { recursive: true, force: true });
});

/** alice uses the first member, bob the second. */
const memberOf = (user: User): string => handle.ids[user === 'alice' ? 0 : 1]!;
const rheaAs = (user: User): Promise<RheaConnection> =>
  connect({
    port: portOf(handle, memberOf(user)),
    username: user,
    password: PASSWORDS[user],
    containerId: SHARED_ID,
  });
const quorateAs = (user: User) =>
  connectQuorate({
    urls: handle.urls[handle.ids.indexOf(memberOf(user))]!,
    username: user,
    password: PASSWORDS[user],
    containerId: SHARED_ID,
    reconnect: false,
  });

describe("another user's names, through another member", () => {
  it('bob cannot replace alice’s durable subscription; it keeps its messages', async () => {
    const alice = await quorateAs('alice');
    const bob = await quorateAs('bob');
    try {
      const durable = { topic: true, durable: true, subscription: 'audit' } as const;
      await (await alice.openReceiver('orders.events', durable)).close();
      const publisher = await alice.openSender('orders.events', { topic: true });
      for (const body of ['a', 'b', 'c']) {
        expect((await publisher.send({ body }, { timeoutMs: 10_000 })).state).toBe('accepted');
      }
      await expect(bob.openReceiver('events.audit', durable)).rejects.toMatchObject({
        condition: 'amqp:unauthorized-access',
      });
      const resumed = await alice.openReceiver('orders.events', durable);
      const got: unknown[] = [];
      for (let i = 0; i < 3; i++) {
        const d = await resumed.receive({ timeoutMs: 10_000 });
        got.push(d.message.body);
        await d.accept();
      }
      expect(got).toEqual(['a', 'b', 'c']);
    } finally {
      await bob.close();
      await alice.close();
    }
  });

  it("bob's dynamic attach and consumer under alice's names take neither her node nor her link", async () => {
    const alice = await rheaAs('alice');
    const bob = await rheaAs('bob');
    try {
      const replies = new TestReceiver(alice, '', { name: 'replies', source: { dynamic: true } });
      await replies.opened;
      const address = String(replies.link.source?.address);
      const work = new TestReceiver(alice, 'orders', { name: 'work' });
      await work.opened;
      expect((await sendAll(alice, 'orders', [{ body: 'first' }]))[0]!.state).toBe('accepted');
      const [held] = await work.next(1);

      const bobReplies = new TestReceiver(bob, '', { name: 'replies', source: { dynamic: true } });
      await bobReplies.opened;
      expect(String(bobReplies.link.source?.address)).not.toBe(address);
      const bobWork = new TestReceiver(bob, 'bob.inbox', { name: 'work' });
      await bobWork.opened;
      // bob's consumer has claimed its key cluster-wide once its first acquire committed
      expect((await sendAll(bob, 'bob.inbox', [{ body: 'bob' }]))[0]!.state).toBe('accepted');
      expect((await bobWork.next(1))[0]!.message.body).toBe('bob');

      expect((await sendAll(alice, address, [{ body: 'reply' }]))[0]!.state).toBe('accepted');
      expect((await replies.next(1))[0]!.message.body).toBe('reply');
      expect((await sendAll(alice, 'orders', [{ body: 'second' }]))[0]!.state).toBe('accepted');
      expect((await work.next(1))[0]!.message.body).toBe('second');
      expect(work.closedByPeer || replies.closedByPeer).toBe(false);
      held!.delivery.accept();
    } finally {
      await closeConnection(bob);
      await closeConnection(alice);
    }
  });
});
