/**
 * Dynamic nodes: a dynamic source gets a broker-named temporary queue (address in the attach
 * reply), deleted when its link closes or its connection ends; kept for the grace period when the
 * connection is lost, so the owner re-attaching after a failover finds it. Our client and rhea, on
 * the single node and on a cluster follower (rhea-broker.ts).
 */
import rhea from 'rhea';
import { afterAll, expect } from 'vitest';
import { LinkProxy } from '../../../../src/cluster-broker/netproxy/index.js';
import { connect } from '../../../../src/index.js';
import { closeConnection, connect as rheaConnect } from '../../../cluster-broker/server/rhea-client.js';
import { waitFor } from '../../../support/net.js';
import { onEachTarget, type RheaTarget } from './rhea-broker.js';

const GRACE_MS = 1_500;
const proxies: LinkProxy[] = [];

afterAll(async () => {
  for (const p of proxies) await p.close();
});

/** Whether the broker under test has the queue (on a member: in the log entries it applied). */
const hasQueue = async (t: RheaTarget, name: string): Promise<boolean> =>
  (await t.counts(name)) !== undefined;

/** A rhea receiver with a dynamic source; resolves with the link and the address the broker named. */
function dynamicReceiver(
  c: rhea.Connection,
  source: Record<string, unknown> = {},
): Promise<{ link: rhea.Receiver; address: string }> {
  return new Promise((resolve, reject) => {
    const link = c.open_receiver({ source: { dynamic: true, ...source } as rhea.Source });
    // a refusal also answers with an attach (null source), then detaches
    link.once('receiver_open', () => {
      if (link.source?.address) resolve({ link, address: String(link.source.address) });
    });
    link.once('receiver_close', () => reject(new Error(`refused: ${JSON.stringify(link.error)}`)));
  });
}

onEachTarget(
  'dynamic nodes',
  (t, it) => {
    it('openReceiver({ dynamic: true }) exposes the broker-named address; it is a reply-to that works; close deletes it', async () => {
      const conn = await connect({ urls: t.url, reconnect: false });
      try {
        const replies = await conn.openReceiver({ dynamic: true });
        expect(replies.address).toMatch(/^\$temp\//);
        expect(await hasQueue(t, replies.address)).toBe(true);
        const sender = await conn.openSender(replies.address);
        await sender.send({ body: 'reply', correlationId: 'c-1' });
        const d = await replies.receive({ timeoutMs: 10_000 });
        expect(d.message.body).toBe('reply');
        await d.accept();
        await replies.close();
        await waitFor(async () => !(await hasQueue(t, replies.address)), {
          timeoutMs: 10_000,
          what: 'the node deleted',
        });
      } finally {
        await conn.close();
      }
    });

    it('keeps the node across a connection reset: the receiver re-attaches to the same address and gets what was sent meanwhile', async () => {
      const proxy = new LinkProxy({ target: { host: '127.0.0.1', port: t.port } });
      proxies.push(proxy);
      const proxyPort = await proxy.listen();
      const conn = await connect({
        urls: [`amqp://127.0.0.1:${proxyPort}`, t.url],
        randomizeMembers: false,
      });
      try {
        const replies = await conn.openReceiver({ dynamic: true, credit: 10 });
        const address = replies.address;
        const reattached = new Promise<void>((r) => replies.once('attached', () => r()));
        proxy.cut('reset');
        await reattached;
        expect(replies.address).toBe(address);
        const other = await rheaConnect({ port: t.port });
        other.open_sender({ target: { address } }).send({ body: 'after failover' });
        const d = await replies.receive({ timeoutMs: 10_000 });
        expect(d.message.body).toBe('after failover');
        await d.accept();
        await closeConnection(other);
        // past the grace period the lost connection started, the re-attached owner still has it
        await new Promise((r) => setTimeout(r, GRACE_MS * 2));
        expect(await hasQueue(t, address)).toBe(true);
      } finally {
        await conn.close();
      }
    });

    it('a dynamic source gets an address in the attach reply; a clean connection close deletes the node', async () => {
      const c = await rheaConnect({ port: t.port });
      const { address, link } = await dynamicReceiver(c);
      expect(address).toMatch(/^\$temp\//);
      expect(link.source.dynamic).toBe(true);
      expect(await hasQueue(t, address)).toBe(true);
      await closeConnection(c);
      await waitFor(async () => !(await hasQueue(t, address)), {
        timeoutMs: 10_000,
        what: 'the node deleted on Close',
      });
    });

    it('detaching the link (closed) deletes the node; a later attach to its address is refused not-found', async () => {
      const c = await rheaConnect({ port: t.port });
      try {
        const { address, link } = await dynamicReceiver(c);
        await new Promise<void>((r) => {
          link.once('receiver_close', () => r());
          link.close();
        });
        await waitFor(async () => !(await hasQueue(t, address)), {
          timeoutMs: 10_000,
          what: 'the node deleted on detach',
        });
        const refused = await new Promise<unknown>((resolve) => {
          const again = c.open_receiver({ source: { address } });
          again.once('receiver_close', () => resolve(again.error));
        });
        expect(refused).toMatchObject({ condition: 'amqp:not-found' });
      } finally {
        await closeConnection(c);
      }
    });

    it('a lost connection keeps the node for the grace period only', async () => {
      const c = await rheaConnect({ port: t.port });
      const { address } = await dynamicReceiver(c);
      const lostAt = Date.now();
      (c as unknown as { socket: { destroy(): void } }).socket.destroy();
      await waitFor(async () => !(await hasQueue(t, address)), {
        timeoutMs: GRACE_MS + 10_000,
        what: 'the node deleted',
      });
      expect(Date.now() - lostAt).toBeGreaterThanOrEqual(GRACE_MS - 50);
    });

    it('delete-on-no-links: the node stays while another link is attached to it', async () => {
      const c = await rheaConnect({ port: t.port });
      try {
        const policy = { 'lifetime-policy': rhea.types.wrap_described([], 0x2c) };
        const { address, link } = await dynamicReceiver(c, { dynamic_node_properties: policy });
        const second = c.open_receiver({ source: { address } });
        await new Promise<void>((r) => second.once('receiver_open', () => r()));
        await new Promise<void>((r) => {
          link.once('receiver_close', () => r());
          link.close();
        });
        // a round trip: the broker handled the detach before this attach
        const third = c.open_receiver({ source: { address } });
        await new Promise<void>((r) => third.once('receiver_open', () => r()));
        expect(await hasQueue(t, address)).toBe(true);
        second.close();
        third.close();
        await waitFor(async () => !(await hasQueue(t, address)), {
          timeoutMs: 10_000,
          what: 'the node deleted with its last link',
        });
      } finally {
        await closeConnection(c);
      }
    });

    it('an unknown lifetime policy is refused with a clear error', async () => {
      const c = await rheaConnect({ port: t.port });
      try {
        const policy = { 'lifetime-policy': rhea.types.wrap_described([], 0x99) };
        await expect(dynamicReceiver(c, { dynamic_node_properties: policy })).rejects.toThrow(
          /unsupported lifetime-policy/,
        );
      } finally {
        await closeConnection(c);
      }
    });

    it('an anonymous-relay sender (null target) routes each message by its `to`', async () => {
      const c = await rheaConnect({ port: t.port });
      try {
        const { address, link } = await dynamicReceiver(c);
        const relay = c.open_sender({ target: {} });
        await new Promise<void>((r) => relay.once('sendable', () => r()));
        relay.send({ to: address, body: 'relayed' });
        const got = await new Promise<unknown>((r) => link.once('message', (ctx) => r(ctx.message?.body)));
        expect(got).toBe('relayed');
      } finally {
        await closeConnection(c);
      }
    });
  },
  { ownerGraceMs: GRACE_MS },
);
