/**
 * What every connection of one server shares: the backend, the options, the consumer registry
 * (link stealing, consumers waiting for messages) and counters.
 */
import type { Activity } from './activity.js';
import type { BrokerBackend } from './backend.js';
import type { DynamicNodes } from './dynamic-nodes.js';
import type { ResolvedServerOptions } from './options.js';
import type { QueueAdmin } from './queue-admin.js';
import type { ResourceAlarm } from './resource-alarm.js';

/** What the registry needs from a consumer link. */
export interface RegisteredConsumer {
  readonly key: string;
  readonly queue: string;
  /** Link credit it holds and has not used (federation's demand, docs/federation.md#demand). */
  readonly unusedCredit: number;
  /** Messages may be available in its queue: try to acquire again. */
  wake(): void;
  /** A new link with the same container-id and name attached: detach with amqp:link:stolen. */
  steal(): void;
}

/** Counters of one AMQP server since it started. */
export interface ServerCounters {
  /** Client connections accepted. */
  connectionsAccepted: number;
  /** Client connections refused (limits, SASL, not serving). */
  connectionsRefused: number;
  /** Messages received from publishers. */
  messagesIn: number;
  /** Messages sent to consumers. */
  messagesOut: number;
  /** Connections closed for a protocol violation. */
  protocolErrors: number;
  /** Links detached with amqp:link:stolen. */
  linksStolen: number;
}

/** Adds `value` to the set of `key` (made on first use). */
function addTo<V>(sets: Map<string, Set<V>>, key: string, value: V): void {
  let set = sets.get(key);
  if (!set) {
    set = new Set();
    sets.set(key, set);
  }
  set.add(value);
}

/** Removes `value` from the set of `key`, and the set once empty. */
function removeFrom<V>(sets: Map<string, Set<V>>, key: string, value: V): void {
  const set = sets.get(key);
  if (set?.delete(value) && set.size === 0) sets.delete(key);
}

/**
 * Queues named during one run of synchronous code, handled once each in a microtask after it
 * (however many times each was named).
 */
class MicrotaskBatch {
  private pending = new Set<string>();
  private scheduled = false;

  constructor(private readonly handle: (queue: string) => void) {}

  add(queue: string): void {
    this.pending.add(queue);
    if (this.scheduled) return;
    this.scheduled = true;
    queueMicrotask(() => {
      this.scheduled = false;
      const queues = this.pending;
      this.pending = new Set();
      for (const q of queues) this.handle(q);
    });
  }
}

export class ConsumerRegistry {
  private readonly byKey = new Map<string, RegisteredConsumer>();
  private readonly waiting = new Map<string, Set<RegisteredConsumer>>();
  /** Bumped each time a queue gets available messages (an acquire started before saw less). */
  private readonly epochs = new Map<string, number>();
  private readonly wakes = new MicrotaskBatch((q) => {
    const set = this.waiting.get(q);
    if (!set) return;
    this.waiting.delete(q);
    for (const c of set) c.wake();
  });
  /** Per queue: who wants to hear that its consumers' unused credit may have grown (federation). */
  private readonly demandWatchers = new Map<string, Set<() => void>>();
  private readonly demandNews = new MicrotaskBatch((q) => {
    for (const listener of this.demandWatchers.get(q) ?? []) listener();
  });

  /** Registers `c`, stealing from a predecessor of the same key. */
  add(c: RegisteredConsumer): void {
    const prev = this.byKey.get(c.key);
    if (prev !== undefined && prev !== c) prev.steal();
    this.byKey.set(c.key, c);
  }

  /** A link of this key attached elsewhere (another cluster member): the local one is stolen. */
  steal(key: string): void {
    const c = this.byKey.get(key);
    if (c === undefined) return;
    this.byKey.delete(key);
    c.steal();
  }

  remove(c: RegisteredConsumer): void {
    if (this.byKey.get(c.key) === c) this.byKey.delete(c.key);
    this.unwait(c);
  }

  get size(): number {
    return this.byKey.size;
  }

  /** Registered consumers per queue (monitoring). */
  countByQueue(): Map<string, number> {
    const out = new Map<string, number>();
    for (const c of this.byKey.values()) out.set(c.queue, (out.get(c.queue) ?? 0) + 1);
    return out;
  }

  /** The unused credit of the consumers of `queue` (federation's demand). */
  unusedCredit(queue: string): number {
    let sum = 0;
    for (const c of this.byKey.values()) if (c.queue === queue) sum += c.unusedCredit;
    return sum;
  }

  /**
   * Calls `listener` when the unused credit of `queue`'s consumers may have grown (a consumer's
   * flow, an acquire answered: docs/federation.md#demand), at most once per microtask batch
   * however many consumers or messages it covers. Returns the way to stop.
   */
  watchDemand(queue: string, listener: () => void): () => void {
    addTo(this.demandWatchers, queue, listener);
    return () => removeFrom(this.demandWatchers, queue, listener);
  }

  /** A consumer of `queue` may have more unused credit now: tell its watchers (deferred, coalesced). */
  demandFreed(queue: string): void {
    // a queue nobody federates into costs a map lookup
    if (this.demandWatchers.has(queue)) this.demandNews.add(queue);
  }

  epoch(queue: string): number {
    return this.epochs.get(queue) ?? 0;
  }

  /** `c` found its queue empty: wake it on the next availability. */
  wait(c: RegisteredConsumer): void {
    addTo(this.waiting, c.queue, c);
  }

  unwait(c: RegisteredConsumer): void {
    removeFrom(this.waiting, c.queue, c);
  }

  /** Backend notification. Deferred to a microtask: it may arrive from inside a submit(). */
  available(queue: string): void {
    this.epochs.set(queue, this.epoch(queue) + 1);
    if (this.waiting.has(queue)) this.wakes.add(queue);
  }
}

export interface ServerContext {
  readonly backend: BrokerBackend;
  readonly opts: ResolvedServerOptions;
  readonly consumers: ConsumerRegistry;
  readonly counters: ServerCounters;
  /** Message counters by outcome and by queue (monitoring). */
  readonly activity: Activity;
  /** Broker-named temporary queues and their lifetimes. */
  readonly dynamicNodes: DynamicNodes;
  /** The broker's queue administration, for every front end (docs/management.md). */
  readonly queueAdmin: QueueAdmin;
  /** Memory and disk alarms (absent: never blocked, e.g. a connection driven in process). */
  readonly alarm?: ResourceAlarm;
}

export function newCounters(): ServerCounters {
  return {
    connectionsAccepted: 0,
    connectionsRefused: 0,
    messagesIn: 0,
    messagesOut: 0,
    protocolErrors: 0,
    linksStolen: 0,
  };
}
