/** createRequester(): request/reply over a named reply queue on the reference broker. */
import { expect, it } from 'vitest';
import { type Connection, createRequester } from '../../src/index.js';
import { brokerAndConnection } from '../support/broker.js';

const env = brokerAndConnection();

/** A service on `address` that answers `x` with `x * 2`, to the request's replyTo. */
async function doubler(address: string): Promise<() => Promise<void>> {
  const requests = await env.conn.openReceiver<number>(address);
  const senders = new Map<string, Awaited<ReturnType<Connection['openSender']>>>();
  void (async () => {
    for await (const d of requests) {
      const to = d.message.replyTo!;
      let s = senders.get(to);
      if (!s) {
        s = await env.conn.openSender(to);
        senders.set(to, s);
      }
      await s.send({ correlationId: d.message.messageId, body: (d.message.body ?? 0) * 2 });
      await d.accept();
    }
  })();
  return async () => {
    await requests.close();
    for (const s of senders.values()) await s.close();
  };
}

it('each reply comes back to its own request, matched by correlation-id', async () => {
  const stop = await doubler('rpc-double');
  const requester = await createRequester<number>(env.conn, 'rpc-double');
  expect(requester.replyTo).toMatch(/^quorate-replies-/);
  const replies = await Promise.all(
    [1, 2, 3].map((x) => requester.request({ body: x }, { timeoutMs: 10_000 })),
  );
  expect(replies.map((d) => d.message.body)).toEqual([2, 4, 6]);
  await requester.close();
  await stop();
});

it('no reply within the deadline rejects with quorate:timeout', async () => {
  const requester = await createRequester(env.conn, 'rpc-nobody', { replyTo: 'rpc-nobody-replies' });
  expect(requester.replyTo).toBe('rpc-nobody-replies');
  await expect(requester.request({ body: 1 }, { timeoutMs: 300 })).rejects.toMatchObject({
    condition: 'quorate:timeout',
  });
  await requester.close();
});
