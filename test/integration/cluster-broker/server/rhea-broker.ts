/**
 * The single-node broker and rhea connection the broker-rhea-*.test.ts files share: each file calls
 * useRheaBroker() once, then reads `broker` and `conn` (live bindings, set in beforeAll).
 */
import { afterAll, beforeAll } from 'vitest';
import { type BrokerHandle, startBroker } from '../../../../src/broker.js';
import { closeConnection, connect, type RheaConnection } from '../../../cluster-broker/server/rhea-client.js';

export let broker: BrokerHandle;
export let conn: RheaConnection;
let queueNo = 0;
/** A queue name not used before in this test file. */
export const fresh = (name: string) => `${name}-${++queueNo}`;

/** Starts the broker and connects before the file's tests; closes and stops after them. */
export function useRheaBroker(): void {
  beforeAll(async () => {
    broker = await startBroker({ port: 0, queueDefaults: {} });
    conn = await connect({ port: broker.port });
  });

  afterAll(async () => {
    await closeConnection(conn);
    await broker.stop();
  });
}
