/**
 * The twins a receiver's first arrival leaves (client/shape-keeper.ts) exist for one thing: to share V8's
 * hidden classes with the deliveries, transfers and messages of the receivers that follow. That
 * is checked in a child Node with --allow-natives-syntax (%HaveSameMap), next to a control whose
 * keys come in another order, which must differ (else the probe proves nothing).
 */
import { expect, it } from 'vitest';
import { runNativesProbe, srcUrl as src } from '../support/natives-probe.js';

it("a receiver's twins have the hidden classes of the next receiver's delivery, transfer and message", () => {
  const seen = runNativesProbe(
    'shape-keeper',
    `import { startBroker } from ${JSON.stringify(src('broker.ts'))};
import { connect } from ${JSON.stringify(src('index.ts'))};
import { keptTwin } from ${JSON.stringify(src('client/shape-keeper.ts'))};
const broker = await startBroker({ port: 0 });
const conn = await connect({ urls: broker.url });
const sender = await conn.openSender('q');
// one message per receiver: none is released at close and redelivered with another header
const receiveOne = async (i: number) => {
  await sender.send({ body: Buffer.alloc(16, i), messageId: 'm' + i, subject: 's' });
  const receiver = await conn.openReceiver('q', { credit: 1 });
  const d = await receiver.receive({ timeoutMs: 10_000 });
  const transfer = d.transfers[0];
  await d.accept();
  await receiver.close();
  return { d, transfer };
};
await receiveOne(1);
const twin = keptTwin()!;
const twinTransfer = twin.transfers[0];
const next = await receiveOne(2);
const same = (a: unknown, b: unknown): boolean => eval('%HaveSameMap(a, b)');
const reordered = Object.fromEntries(Object.entries(next.d.message).reverse());
console.log(JSON.stringify({
  delivery: same(twin, next.d),
  transfer: same(twinTransfer, next.transfer),
  message: same(twin.message, next.d.message),
  control: same(reordered, next.d.message),
}));
await sender.close();
await conn.close();
await broker.stop();
`,
  );
  expect(seen).toEqual({
    delivery: true,
    transfer: true,
    message: true,
    control: false,
  });
}, 90_000);
