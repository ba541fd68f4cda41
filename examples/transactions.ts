/**
 * Move messages from one queue to another in local transactions: the accept of the incoming
 * message and the send of the outgoing one take effect together at the commit, or not at all.
 *
 *   npx quorate-broker --port 5672 &            # or any AMQP 1.0 broker with local transactions
 *   npx tsx examples/transactions.ts [amqp://127.0.0.1:5672]
 */
import { connect } from 'quorate';

const url = process.argv[2] ?? 'amqp://127.0.0.1:5672';
const conn = await connect({ urls: url, containerId: 'example-transactions' });
try {
  const incoming = await conn.openSender('example-tx-incoming');
  for (let order = 1; order <= 2; order++) await incoming.send({ body: { order } });

  const receiver = await conn.openReceiver<{ order: number }>('example-tx-incoming', { credit: 1 });
  const processed = await conn.openSender('example-tx-processed');

  // Commit: the order leaves the incoming queue and reaches the processed one at the same moment.
  const first = await receiver.receive({ timeoutMs: 10_000 });
  await conn.transaction(async (tx) => {
    await processed.send({ body: { ...first.message.body, done: true } }, { tx });
    await first.accept({ tx });
  });
  console.log(`committed order ${first.message.body?.order}`);

  // Rollback: the function throws, so neither the send nor the accept happens and the error is
  // rethrown; the broker offers the order again.
  const second = await receiver.receive({ timeoutMs: 10_000 });
  try {
    await conn.transaction(async (tx) => {
      await processed.send({ body: { ...second.message.body, done: true } }, { tx });
      await second.accept({ tx });
      throw new Error('payment service unavailable');
    });
  } catch (e) {
    console.log(`rolled back order ${second.message.body?.order}: ${(e as Error).message}`);
  }
  const again = await receiver.receive({ timeoutMs: 10_000 });
  console.log(`offered again: order ${again.message.body?.order}`);
  await again.release();
} finally {
  await conn.close();
}
