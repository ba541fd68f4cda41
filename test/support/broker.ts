import { type BrokerHandle, startBroker } from '../../src/broker.js';

/** Runs `fn` against a single-node broker on a free port, stopped afterwards whatever happens. */
export async function withBroker(
  opts: Parameters<typeof startBroker>[0],
  fn: (b: BrokerHandle) => Promise<void>,
): Promise<void> {
  const b = await startBroker({ port: 0, ...opts });
  try {
    await fn(b);
  } finally {
    await b.stop();
  }
}
