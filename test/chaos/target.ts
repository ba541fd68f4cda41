/**
 * What the nemesis and the workers need from a system under test: member ids and URLs, queue
 * addresses, and the fault operations. `quorate-target.ts` (the reference cluster, every fault)
 * and `rabbit-target.ts` (a 3-node RabbitMQ cluster with quorum queues, process faults only)
 * implement it.
 */
import type { ConnectOptions } from '../../src/index.js';
import type { Fault, StoreFile } from './schedule.js';

export interface ChaosTarget {
  readonly name: 'quorate' | 'rabbitmq';
  /** member ids, in order */
  readonly ids: string[];
  /** one URL per member, in id order (what clients are configured with) */
  readonly urls: string[];
  /** connect options this target needs (credentials, ...) */
  readonly connectOptions: Partial<ConnectOptions>;
  /** can this target inject this fault (RabbitMQ has no proxies between its nodes) */
  supports(kind: Fault['kind']): boolean;
  /** the AMQP address of queue `name` */
  address(queue: string): string;
  /** create the queues where the broker needs them declared first */
  prepare(queues: readonly string[]): Promise<void>;
  /** the member serving `url` (matched by port on loopback) */
  memberOfUrl(url: string): string | undefined;
  /** SIGKILL; the member stays down until start(id) */
  kill(id: string): Promise<void>;
  /** start a killed member; resolves once it is ready */
  start(id: string): Promise<void>;
  /**
   * flip one byte of a killed member's store file (at fraction `at` of its size); returns what
   * was damaged, or undefined when that file does not exist (nothing damaged)
   */
  corrupt(id: string, file: StoreFile, at: number): Promise<string | undefined>;
  pause(id: string): Promise<void>;
  resume(id: string): Promise<void>;
  partition(groups: readonly (readonly string[])[]): void;
  ring(): void;
  heal(): void;
  slow(ms: number): void;
  lossy(p: number): void;
  /** resolves true once every member runs and serves clients, false at the deadline */
  waitHealthy(timeoutMs: number): Promise<boolean>;
  /** undo every fault still in force (heal, resume, start dead members) */
  recover(): Promise<void>;
  stop(): Promise<void>;
}

export function portOf(url: string): number {
  const u = new URL(url);
  return Number(u.port || 5672);
}
