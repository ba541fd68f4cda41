/**
 * A 3-node RabbitMQ 3.10 cluster as a chaos target (issue 7.2): quorum queues declared over
 * AMQP 0-9-1 and addressed as `/amq/queue/NAME` over AMQP 1.0. Faults: SIGKILL of beam.smp and a
 * restart on the node's data, SIGSTOP/SIGCONT, a restart of every node. There are no proxies
 * between RabbitMQ nodes, so partitions and link faults are not supported (skipped, reported).
 */

import { setTimeout as sleep } from 'node:timers/promises';
import amqplib from 'amqplib';
import { connect } from '../../src/index.js';
import { type RabbitCluster, type RabbitNode, startRabbit } from '../support/rabbitmq.js';
import type { Fault } from './schedule.js';
import type { ChaosTarget } from './target.js';
import { portOf } from './target.js';

/** Does the node at `url` complete an AMQP 1.0 Open? */
async function nodeAnswers(url: string): Promise<boolean> {
  try {
    const conn = await connect({ urls: [url], reconnect: false, timeoutMs: 3_000, idleTimeoutMs: 0 });
    await conn.close({ timeoutMs: 1_000 }).catch(() => undefined);
    return true;
  } catch {
    return false;
  }
}

export class RabbitTarget implements ChaosTarget {
  readonly name = 'rabbitmq' as const;
  readonly connectOptions = {};
  private readonly down = new Set<string>();
  private readonly paused = new Set<string>();

  private constructor(readonly rabbit: RabbitCluster) {}

  static async start(nodes = 3): Promise<RabbitTarget> {
    return new RabbitTarget(await startRabbit(nodes));
  }

  get ids(): string[] {
    return this.rabbit.nodes.map((n) => n.name);
  }

  get urls(): string[] {
    return this.rabbit.urls;
  }

  supports(kind: Fault['kind']): boolean {
    return kind === 'kill' || kind === 'pause' || kind === 'restart-all';
  }

  /** never asked (supports('corrupt') is false): RabbitMQ's store format is not ours to damage here */
  async corrupt(): Promise<string | undefined> {
    return undefined;
  }

  address(queue: string): string {
    return `/amq/queue/${queue}`;
  }

  async prepare(queues: readonly string[]): Promise<void> {
    const c = await amqplib.connect(this.rabbit.urls[0]!);
    try {
      const ch = await c.createChannel();
      for (const q of queues) {
        await ch.assertQueue(q, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
      }
      await ch.close();
    } finally {
      await c.close();
    }
  }

  memberOfUrl(url: string): string | undefined {
    const port = portOf(url);
    return this.rabbit.nodes.find((n) => n.amqpPort === port)?.name;
  }

  private node(id: string): RabbitNode {
    const n = this.rabbit.nodes.find((x) => x.name === id);
    if (!n) throw new Error(`no RabbitMQ node ${id}`);
    return n;
  }

  async kill(id: string): Promise<void> {
    if (this.paused.has(id)) await this.resume(id);
    this.down.add(id);
    await this.node(id).kill();
  }

  async start(id: string): Promise<void> {
    await this.node(id).start();
    this.down.delete(id);
  }

  async pause(id: string): Promise<void> {
    process.kill(this.node(id).pid(), 'SIGSTOP');
    this.paused.add(id);
  }

  async resume(id: string): Promise<void> {
    try {
      process.kill(this.node(id).pid(), 'SIGCONT');
    } finally {
      this.paused.delete(id);
    }
  }

  partition(): void {}
  ring(): void {}
  heal(): void {}
  slow(): void {}
  lossy(): void {}

  async waitHealthy(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.down.size === 0 && this.paused.size === 0) {
        const ok = await Promise.all(this.rabbit.urls.map((u) => nodeAnswers(u)));
        if (ok.every(Boolean)) return true;
      }
      if (Date.now() > deadline) return false;
      await sleep(500);
    }
  }

  async recover(): Promise<void> {
    for (const id of [...this.paused]) await this.resume(id);
    await Promise.all([...this.down].map((id) => this.start(id)));
  }

  stop(): Promise<void> {
    return this.rabbit.stop();
  }
}
