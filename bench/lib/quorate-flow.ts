/** The quorate client's side of the topic and federation benches: send with a window, receive and accept. */
import type { Receiver, Sender } from '../../src/index.js';
import { loadQuorate } from './built-package.js';

const { connect } = await loadQuorate();

/**
 * A publisher connection on `sendUrls` and a consumer connection on `receiveUrls` (no reconnect),
 * a receiver with credit `window` and a sender on `queue`, handed to `use`; both closed after.
 */
export async function withFlow<T>(
  sendUrls: string[],
  receiveUrls: string[],
  queue: string,
  window: number,
  use: (sender: Sender, receiver: Receiver) => Promise<T>,
): Promise<T> {
  const pub = await connect({ urls: sendUrls, reconnect: false });
  const sub = await connect({ urls: receiveUrls, reconnect: false });
  try {
    const receiver = await sub.openReceiver(queue, { credit: window, confirmAccept: false });
    return await use(await pub.openSender(queue), receiver);
  } finally {
    await pub.close().catch(() => {});
    await sub.close().catch(() => {});
  }
}

/** Sends ids `${tag}-0..n-1` on `sender` with `window` sends in flight; each must be accepted. */
export async function sendAll(
  sender: Sender,
  n: number,
  window: number,
  body: Buffer,
  tag: string,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const i = next++;
      const r = await sender.send({ body, messageId: `${tag}-${i}` });
      if (r.state !== 'accepted') throw new Error(`send ${tag}-${i}: ${r.state}`);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, window) }, worker));
}

/** Receives and accepts `n` deliveries on `receiver`. */
export async function receiveAll(receiver: Receiver, n: number): Promise<void> {
  let got = 0;
  for await (const d of receiver) {
    void d.accept();
    if (++got === n) return;
  }
  throw new Error(`receiver ended after ${got} of ${n}`);
}
