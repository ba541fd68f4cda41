/**
 * An in-process client engine wired to a BrokerConnection through memory (no sockets): the
 * broker's connection handler exactly as the server runs it, with a backend the test chooses.
 */

import { Activity } from '../../../src/cluster-broker/server/activity.js';
import type { BrokerBackend } from '../../../src/cluster-broker/server/backend.js';
import { BrokerConnection } from '../../../src/cluster-broker/server/broker-connection.js';
import {
  ConsumerRegistry,
  newCounters,
  type ServerContext,
} from '../../../src/cluster-broker/server/context.js';
import { DynamicNodes } from '../../../src/cluster-broker/server/dynamic-nodes.js';
import {
  type BrokerServerOptions,
  resolveServerOptions,
} from '../../../src/cluster-broker/server/options.js';
import { QueueAdmin } from '../../../src/cluster-broker/server/queue-admin.js';
import { encodeMessage, type Message } from '../../../src/codec/index.js';
import { type EngineEvent, ProtocolConnection, type Session } from '../../../src/protocol/index.js';

export function serverContext(
  backend: BrokerBackend,
  opts: Omit<BrokerServerOptions, 'backend'> = {},
): ServerContext {
  const resolved = resolveServerOptions(opts);
  const ctx: ServerContext = {
    backend,
    opts: resolved,
    consumers: new ConsumerRegistry(),
    counters: newCounters(),
    activity: new Activity(),
    dynamicNodes: new DynamicNodes(backend, resolved.logger, resolved.dynamicNodeGraceMs),
    queueAdmin: new QueueAdmin(backend, resolved.queueDefaults),
  };
  backend.on('available', (q) => ctx.consumers.available(q));
  return ctx;
}

/** Lets setImmediate-scheduled work (the broker's writes, the store's flush) run. */
export function turn(): Promise<void> {
  return new Promise((r) => setImmediate(r));
}

export class InProcessPair {
  readonly client: ProtocolConnection;
  readonly broker: BrokerConnection;
  readonly events: EngineEvent[] = [];
  brokerEnded = false;
  /** What the broker sees as unsent socket output (congestion tests). */
  backlog = 0;
  session!: Session;

  constructor(ctx: ServerContext, containerId = 'in-process') {
    this.client = new ProtocolConnection({ role: 'client', open: { containerId } });
    this.broker = new BrokerConnection(
      ctx,
      {
        write: (chunks) => {
          for (const c of chunks) this.client.receive(c, Date.now());
        },
        end: () => {
          this.brokerEnded = true;
        },
        backlog: () => this.backlog,
      },
      Date.now(),
    );
  }

  /** Moves bytes both ways and collects client events until nothing moves for a few turns. */
  async settle(turns = 5): Promise<void> {
    let quiet = 0;
    while (quiet < turns) {
      let moved = false;
      for (const c of this.client.takeOutput()) {
        this.broker.receive(c, Date.now());
        moved = true;
      }
      const evs = this.client.pollEvents();
      if (evs.length > 0) moved = true;
      this.events.push(...evs);
      await turn();
      quiet = moved ? 0 : quiet + 1;
    }
  }

  async open(): Promise<void> {
    await this.settle();
    this.session = this.client.begin();
    await this.settle();
  }

  of<T extends EngineEvent['type']>(type: T): Extract<EngineEvent, { type: T }>[] {
    return this.events.filter((e) => e.type === type) as Extract<EngineEvent, { type: T }>[];
  }
}

export function msg(m: Message): Uint8Array {
  return encodeMessage(m);
}
