/**
 * The queue consumers of a chaos run: on every side that has consumers, one receiver per queue
 * (two with competing consumers), each on its own connection, recording every hand-out.
 */
import type { Connection, Receiver } from '../../src/index.js';
import type { History } from './history.js';
import type { Side } from './sides.js';
import type { ChaosTarget } from './target.js';
import { type ConsumerInfo, runConsumer, watchReceiver } from './workers.js';

export interface QueueConsumers {
  receivers: Receiver[];
  /** each consumer's loop: resolves with its hand-outs once its receiver closes */
  done: Promise<number>[];
  /** each consumer as it is now */
  infos: (() => ConsumerInfo)[];
}

export async function startQueueConsumers(o: {
  sides: readonly Side[];
  addresses: readonly string[];
  /** consumers per queue on each side */
  perQueue: number;
  seed: number;
  /** receiver dedup on (false: what the brokers deliver twice reaches the checker) */
  dedup: boolean;
  connect: (containerId: string, on: ChaosTarget) => Promise<Connection>;
  history: History;
  /** every value handed out by any consumer (drain progress) */
  seen: Set<string>;
  /** every hand-out, with the side's name */
  onMessage: (side: string) => void;
  log: (line: string) => void;
}): Promise<QueueConsumers> {
  const consumers: QueueConsumers = { receivers: [], done: [], infos: [] };
  const { perQueue } = o;
  for (const side of o.sides.filter((x) => x.consumers)) {
    for (const [qi, address] of o.addresses.entries()) {
      for (let k = 0; k < perQueue; k++) {
        const name = `${side.name ? `${side.name}-` : ''}c${qi}${perQueue > 1 ? String.fromCharCode(97 + k) : ''}`;
        const conn = await o.connect(`chaos-${o.seed}-${name}`, side.target);
        const receiver = await conn.openReceiver(address, {
          credit: 50,
          timeoutMs: 120_000,
          ...(o.dedup ? {} : { dedup: false }),
        });
        consumers.receivers.push(receiver);
        consumers.infos.push(watchReceiver(name, conn, receiver, o.log));
        consumers.done.push(
          runConsumer({
            process: name,
            receiver,
            history: o.history,
            seen: o.seen,
            onMessage: () => o.onMessage(side.name),
          }),
        );
      }
    }
  }
  return consumers;
}
