/**
 * Request/reply over a named reply queue: a service answers requests from `example-requests`;
 * the client sends each request with `replyTo` (its own reply queue) and matches answers by
 * `correlationId` (the request's message-id).
 *
 *   npx quorate-broker --port 5672 &
 *   npx tsx examples/request-reply.ts [amqp://127.0.0.1:5672]
 */
import { type Connection, connect, type MessageId, type Sender } from 'quorate';

const url = process.argv[2] ?? 'amqp://127.0.0.1:5672';

/** The service: doubles every number it is sent, replying to the sender's `replyTo`. */
async function serve(conn: Connection): Promise<void> {
  const requests = await conn.openReceiver('example-requests');
  const replies = new Map<string, Sender>(); // one sender per reply queue
  for await (const request of requests) {
    const { replyTo, messageId, body } = request.message;
    if (replyTo !== undefined) {
      let sender = replies.get(replyTo);
      if (sender === undefined) {
        sender = await conn.openSender(replyTo);
        replies.set(replyTo, sender);
      }
      await sender.send({ correlationId: messageId, body: { doubled: Number(body) * 2 } });
    }
    await request.accept();
  }
}

const service = await connect({ urls: url, containerId: 'example-service' });
const client = await connect({ urls: url, containerId: 'example-client' });
try {
  void serve(service).catch(() => {}); // ends when the service connection closes

  const replyQueue = `example-replies-${client.containerId}`;
  const replies = await client.openReceiver(replyQueue);
  const requests = await client.openSender('example-requests');

  const waiting = new Map<MessageId, (body: unknown) => void>();
  void (async () => {
    for await (const reply of replies) {
      waiting.get(reply.message.correlationId ?? '')?.(reply.message.body);
      await reply.accept();
    }
  })().catch(() => {});

  for (const n of [1, 2, 3]) {
    const answered = new Promise<unknown>((resolve) => waiting.set(`request-${n}`, resolve));
    await requests.send({ messageId: `request-${n}`, replyTo: replyQueue, body: n }, { timeoutMs: 10_000 });
    console.log(`request ${n} -> reply ${JSON.stringify(await answered)}`);
  }
} finally {
  await client.close();
  await service.close();
}
