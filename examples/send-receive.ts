/**
 * Send three messages to a queue, then receive and accept them.
 *
 *   npx quorate-broker --port 5672 &            # or any AMQP 1.0 broker
 *   npx tsx examples/send-receive.ts [amqp://127.0.0.1:5672]
 */
import { connect } from 'quorate';

const url = process.argv[2] ?? 'amqp://127.0.0.1:5672';
const conn = await connect({ urls: url, containerId: 'example-send-receive' });
try {
  const sender = await conn.openSender('example-orders');
  for (let order = 1; order <= 3; order++) {
    // Resolves once the broker settled it: `accepted` means it is stored (with quorate's broker: on disk).
    const result = await sender.send({ body: { order, total: 10 * order } }, { timeoutMs: 10_000 });
    console.log(`sent order ${order}: ${result.state}, message-id ${String(result.messageId)}`);
  }

  const receiver = await conn.openReceiver('example-orders', { credit: 10 });
  let received = 0;
  for await (const delivery of receiver) {
    console.log(`received ${JSON.stringify(delivery.message.body)}`);
    await delivery.accept(); // the broker removes it (confirmed where the broker offers that)
    if (++received === 3) break;
  }
} finally {
  await conn.close();
}
