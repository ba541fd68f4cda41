/**
 * Topics with independent AMQP 1.0 clients (docs/topics.md): rhea publishes and subscribes by
 * setting the terminus capability `topic` (a durable subscription by durable = unsettled-state and
 * expiry-policy never), a non-durable subscription outlives a lost connection for the grace
 * period, `--dedup` drops a re-sent rhea publish, and a Qpid Proton Python
 * subscriber gets what our client publishes.
 */
import { spawn } from 'node:child_process';
import rhea from 'rhea';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrokerNode, startBroker } from '../../../../src/cluster-broker/assembly/index.js';
import { connect } from '../../../../src/index.js';
import {
  closeConnection,
  connect as rheaConnect,
  sendAll,
  TestReceiver,
} from '../../../cluster-broker/server/rhea-client.js';
import { waitFor } from '../../../support/net.js';

let broker: BrokerNode;

beforeAll(async () => {
  broker = await startBroker({ port: 0 });
});
afterAll(async () => {
  await broker?.stop();
});

const topicSource = (address: string, extra: Record<string, unknown> = {}) => ({
  source: { address, capabilities: ['topic'], ...extra },
});

describe('rhea', () => {
  it('publishes to a topic and subscribes (non-durable, durable, with a selector) by the capability', async () => {
    const conn = await rheaConnect({ port: broker.port, containerId: 'rhea-topics' });
    try {
      const plain = new TestReceiver(conn, 'rhea-news', { ...topicSource('rhea-news'), name: 'plain' });
      const durable = new TestReceiver(conn, 'rhea-news', {
        ...topicSource('rhea-news', { durable: 2, expiry_policy: 'never' }),
        name: 'kept',
      });
      const green = new TestReceiver(conn, 'rhea-news', {
        ...topicSource('rhea-news', { filter: rhea.filter.selector("colour = 'green'") }),
        name: 'green',
      });
      await Promise.all([plain.opened, durable.opened, green.opened]);
      const reply = (r: TestReceiver) => r.link.source as unknown as Record<string, unknown>;
      for (const r of [plain, durable, green]) expect(reply(r).capabilities).toEqual(['topic']);
      expect(reply(durable)).toMatchObject({ durable: 2, expiry_policy: 'never' });
      // the filters in force (spec 3.5.3)
      expect(Object.keys((reply(green).filter ?? {}) as object)).toEqual(['jms-selector']);

      const outcomes = await sendAll(
        conn,
        'rhea-news',
        ['red', 'green', 'blue'].map((colour) => ({ body: colour, application_properties: { colour } })),
        { target: { address: 'rhea-news', capabilities: ['topic'] } },
      );
      expect(outcomes.map((o) => o.state)).toEqual(['accepted', 'accepted', 'accepted']);
      const bodies = async (r: TestReceiver, n: number) =>
        (await r.next(n)).map((x) => {
          x.delivery.accept();
          return x.message.body;
        });
      expect(await bodies(plain, 3)).toEqual(['red', 'green', 'blue']);
      expect(await bodies(durable, 3)).toEqual(['red', 'green', 'blue']);
      expect(await bodies(green, 1)).toEqual(['green']);
    } finally {
      await closeConnection(conn);
    }
    // the clean close ended the non-durable ones; the durable one stays until a closing detach
    expect(broker.backend.state.subscriptionsOf('rhea-news')).toEqual(['$sub/rhea-topics/kept']);
  });
});

describe('a non-durable subscription on a lost connection', () => {
  it('is kept for the grace period: re-attached by container-id and link name, it has what was published meanwhile', async () => {
    const first = await rheaConnect({ port: broker.port, containerId: 'rhea-failover' });
    const sub = new TestReceiver(first, 'lost-news', { ...topicSource('lost-news'), name: 'mine' });
    await sub.opened;
    (first as unknown as { socket: { destroy(): void } }).socket.destroy();
    const pub = await rheaConnect({ port: broker.port });
    try {
      await sendAll(pub, 'lost-news', [{ body: 'while-away' }], {
        target: { address: 'lost-news', capabilities: ['topic'] },
      });
      const again = await rheaConnect({ port: broker.port, containerId: 'rhea-failover' });
      const back = new TestReceiver(again, 'lost-news', { ...topicSource('lost-news'), name: 'mine' });
      const [got] = await back.next(1);
      expect(got!.message.body).toBe('while-away');
      got!.delivery.accept();
      await closeConnection(again); // a clean Close ends it
      await waitFor(() => broker.backend.state.subscriptionsOf('lost-news').length === 0, {
        timeoutMs: 10_000,
        what: 'the subscription deleted on Close',
      });
    } finally {
      await closeConnection(pub);
    }
  });
});

describe('a broker run with --dedup', () => {
  it('drops a re-sent publish from a sender that did not ask for dedup: each subscription gets it once', async () => {
    const dedupBroker = await startBroker({ port: 0, dedup: true });
    const conn = await rheaConnect({ port: dedupBroker.port });
    try {
      const subs = [1, 2].map(
        (i) => new TestReceiver(conn, 'dedup-news', { ...topicSource('dedup-news'), name: `s${i}` }),
      );
      await Promise.all(subs.map((r) => r.opened));
      const target = { target: { address: 'dedup-news', capabilities: ['topic'] } };
      const again = { message_id: 'same-id', body: 'once' };
      await sendAll(conn, 'dedup-news', [again, again, { message_id: 'other', body: 'next' }], target);
      for (const r of subs) {
        const got = await r.next(2);
        expect(got.map((x) => x.message.body)).toEqual(['once', 'next']);
        for (const x of got) x.delivery.accept();
      }
      // nothing left behind: the duplicate never entered a subscription
      const { state } = dedupBroker.backend;
      await waitFor(() => state.subscriptionsOf('dedup-news').every((q) => state.queueInfo(q)?.depth === 0), {
        timeoutMs: 10_000,
        what: 'both subscriptions empty once accepted',
      });
    } finally {
      await closeConnection(conn);
      await dedupBroker.stop();
    }
  });
});

describe('Qpid Proton', () => {
  it('a Proton subscriber (capability topic, durable, selector) gets what our client publishes', async () => {
    const child = spawn(
      '/usr/bin/python3',
      ['test/support/proton_topic_subscriber.py', broker.url, 'proton-news', '2', 'n >= 2'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (b: Buffer) => {
      stderr += b.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (b: Buffer) => {
          stdout += b.toString();
          if (stdout.includes('attached\n')) resolve();
        });
        child.once('exit', (code) => reject(new Error(`proton subscriber exited ${code}: ${stderr}`)));
      });
      const conn = await connect({ urls: broker.url, reconnect: false });
      try {
        const sender = await conn.openSender('proton-news', { topic: true });
        for (let n = 1; n <= 3; n++)
          await sender.send({ messageId: `p-${n}`, body: `n-${n}`, applicationProperties: { n } });
      } finally {
        await conn.close();
      }
      expect(await exited).toBe(0);
    } finally {
      child.kill();
    }
    const result = JSON.parse(stdout.trim().split('\n').pop()!) as {
      received: Array<{ id: string; body: unknown }>;
      capabilities: string[];
      filtered: boolean;
    };
    expect(result.capabilities).toEqual(['topic']);
    expect(result.filtered).toBe(true);
    expect(result.received).toEqual([
      { id: 'p-2', body: 'n-2' },
      { id: 'p-3', body: 'n-3' },
    ]);
  });
});
