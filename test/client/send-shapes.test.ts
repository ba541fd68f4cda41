/**
 * The twins a sender's first send leaves (client/send-shapes.ts) keep the send path's hidden
 * classes, and nothing else: no message, sender or connection of the application's. The maps are
 * checked in a child Node with --allow-natives-syntax (%HaveSameMap), next to a control whose
 * keys come in another order, which must differ (else the probe proves nothing).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type BrokerHandle, startBroker } from '../../src/broker.js';
import { keptSendTwins } from '../../src/client/send-shapes.js';
import { connect } from '../../src/index.js';
import { collectedWithin } from '../support/collected.js';
import { runNativesProbe, srcUrl as src } from '../support/natives-probe.js';

let broker: BrokerHandle;
beforeAll(async () => {
  broker = await startBroker({ port: 0 });
});
afterAll(async () => {
  await broker?.stop();
});

it("a sender's first send leaves twins holding none of its objects: its message, sender and connection are collected after close", async () => {
  // in a function of its own: no variable of this test's frame keeps what it made
  const sendOne = async () => {
    const conn = await connect({ urls: broker.url });
    const sender = await conn.openSender('send-twin-q');
    const message = { body: Buffer.alloc(64, 1), subject: 's' };
    const result = await sender.send(message);
    expect(result.state).toBe('accepted');
    await sender.close();
    await conn.close();
    return [new WeakRef(message.body), new WeakRef(message), new WeakRef(sender), new WeakRef(conn)];
  };
  const refs = await sendOne();
  const twins = keptSendTwins();
  // the copy's keys (the application's, then messageId), with nothing in them
  expect(Object.keys(twins.message ?? {})).toEqual(['body', 'subject', 'messageId']);
  expect(twins.message?.messageId).toBe('');
  expect(twins.message?.body).not.toBeInstanceOf(Uint8Array);
  expect(twins.sender).toBeDefined();
  expect(twins.delivery?.payload.length).toBe(0);
  expect(await collectedWithin(refs)).toBe(true);
});

it("a sender's twins have the hidden classes of a later connection's sender, link, delivery, journal entry and message", () => {
  const seen = runNativesProbe(
    'send-shapes',
    `import { startBroker } from ${JSON.stringify(src('broker.ts'))};
import { connect } from ${JSON.stringify(src('index.ts'))};
import { keptSendTwins } from ${JSON.stringify(src('client/send-shapes.ts'))};
import { ensureMessageId } from ${JSON.stringify(src('failover/index.ts'))};
const broker = await startBroker({ port: 0 });
const message = (i: number) => ({ body: Buffer.alloc(16, i), subject: 's' });
const first = await connect({ urls: broker.url });
await (await first.openSender('q')).send(message(1));
await first.close();
const twins = keptSendTwins();
const conn = await connect({ urls: broker.url });
const sender = await conn.openSender('q');
// the settled journal entry of a send, as the journal hands it back
const journal = (conn as any).sends.journal;
const settle = journal.settle.bind(journal);
let entry: any;
journal.settle = (seq: number, state: unknown) => {
  const r = settle(seq, state);
  entry ??= r?.entry;
  return r;
};
await sender.send(message(2));
// a delivery written on the same link and settled by the broker, as a send's is
const link = (sender as any).link;
const d = link.send(new Uint8Array(4), (entry as any).bytes, { settled: false });
const deadline = Date.now() + 10_000;
while (d.status !== 'settled' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
const copy = ensureMessageId(message(3)).message;
const same = (a: unknown, b: unknown): boolean => eval('%HaveSameMap(a, b)');
const reordered = Object.fromEntries(Object.entries(copy).reverse());
console.log(JSON.stringify({
  sender: same(twins.sender, sender),
  link: same(twins.delivery!.link, link),
  delivery: same(twins.delivery, d),
  entry: same(twins.settled, entry),
  deadline: same((twins.settled as any).context, entry.context.deadline),
  message: same(twins.message, copy),
  control: same(reordered, copy),
}));
await sender.close();
await conn.close();
await broker.stop();
`,
  );
  expect(seen).toEqual({
    sender: true,
    link: true,
    delivery: true,
    entry: true,
    deadline: true,
    message: true,
    control: false,
  });
}, 90_000);
