import { afterAll, beforeAll } from 'vitest';
import { type BrokerNode, startBroker } from '../../src/cluster-broker/assembly/index.js';
import { type Connection, connect } from '../../src/index.js';

/** Runs `fn` against a single-node broker on a free port, stopped afterwards whatever happens. */
export async function withBroker(
  opts: Parameters<typeof startBroker>[0],
  fn: (b: BrokerNode) => Promise<void>,
): Promise<void> {
  const b = await startBroker({ port: 0, ...opts });
  try {
    await fn(b);
  } finally {
    await b.stop();
  }
}

/**
 * A single-node broker on a free port and one client connection to it, for the whole test file:
 * started before its tests, closed and stopped after them. Read them as `env.broker`, `env.conn`.
 */
export function brokerAndConnection(): { readonly broker: BrokerNode; readonly conn: Connection } {
  let broker: BrokerNode | undefined;
  let conn: Connection | undefined;
  beforeAll(async () => {
    broker = await startBroker({ host: '127.0.0.1', port: 0 });
    conn = await connect({ urls: broker.url });
  });
  afterAll(async () => {
    await conn?.close();
    await broker?.stop();
  });
  return {
    get broker(): BrokerNode {
      if (broker === undefined) throw new Error('the broker starts in beforeAll');
      return broker;
    },
    get conn(): Connection {
      if (conn === undefined) throw new Error('the connection opens in beforeAll');
      return conn;
    },
  };
}
