/**
 * The reference cluster as a chaos target: `startCluster` members (real processes, SIGKILL /
 * SIGSTOP by PID) talking through the loopback proxy mesh (partitions, ring, slow, lossy).
 * Healthy = every member running and saying in its Open that it is quorate.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type ClusterHandle, type StartClusterOptions, startCluster } from '../../src/broker.js';
import { connect } from '../../src/index.js';
import { failoverListFromOpenProperties } from '../../src/wire-extensions.js';
import type { StoreFile } from './schedule.js';
import type { ChaosTarget } from './target.js';
import { portOf } from './target.js';

/** Does the member at `url` serve clients (quorate, caught up)? One short-lived connection. */
export async function memberServes(url: string, timeoutMs = 3_000): Promise<boolean> {
  try {
    const conn = await connect({ urls: [url], reconnect: false, timeoutMs, idleTimeoutMs: 0 });
    try {
      const list = failoverListFromOpenProperties(conn.remoteOpen?.properties);
      const port = portOf(url);
      return list?.members.find((m) => m.port === port)?.quorate === true;
    } finally {
      await conn.close({ timeoutMs: 1_000 }).catch(() => undefined);
    }
  } catch {
    return false;
  }
}

/** Waits until every listed member is running and serving; false at the deadline. */
export async function waitClusterServing(
  cluster: ClusterHandle,
  timeoutMs: number,
  ids: readonly string[] = cluster.ids,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const members = cluster.members().filter((m) => ids.includes(m.id));
    if (members.every((m) => m.state === 'running')) {
      const ok = await Promise.all(members.map((m) => memberServes(m.url)));
      if (ok.every(Boolean)) return true;
    }
    if (Date.now() > deadline) return false;
    await sleep(200);
  }
}

export class QuorateTarget implements ChaosTarget {
  readonly name = 'quorate' as const;
  readonly connectOptions = {};
  private paused = new Set<string>();
  private degradedLinks = false;

  private constructor(readonly cluster: ClusterHandle) {}

  static async start(options: StartClusterOptions): Promise<QuorateTarget> {
    const cluster = await startCluster({ autoRestart: true, ...options });
    const t = new QuorateTarget(cluster);
    if (!(await waitClusterServing(cluster, 60_000))) {
      await cluster.stop();
      throw new Error('reference cluster did not serve within 60 s of starting');
    }
    return t;
  }

  get ids(): string[] {
    return this.cluster.ids;
  }

  get urls(): string[] {
    return this.cluster.urls;
  }

  supports(): boolean {
    return true;
  }

  address(queue: string): string {
    return queue;
  }

  async prepare(): Promise<void> {
    // queues are created by the first attach
  }

  memberOfUrl(url: string): string | undefined {
    const port = portOf(url);
    return this.cluster.members().find((m) => m.amqpPort === port)?.id;
  }

  kill(id: string): Promise<void> {
    return this.cluster.kill(id);
  }

  async start(id: string): Promise<void> {
    await this.cluster.restart(id);
  }

  async corrupt(id: string, file: StoreFile, at: number): Promise<string | undefined> {
    const path = join(this.cluster.dataDir, id, 'raft', file);
    const bytes = await readFile(path).catch(() => undefined);
    if (!bytes || bytes.length === 0) return undefined;
    const offset = Math.min(bytes.length - 1, Math.floor(at * bytes.length));
    bytes[offset] = bytes[offset]! ^ 0x20;
    await writeFile(path, bytes);
    return `${id}/${file} byte ${offset} of ${bytes.length}`;
  }

  async pause(id: string): Promise<void> {
    this.paused.add(id);
    await this.cluster.pause(id);
  }

  async resume(id: string): Promise<void> {
    this.paused.delete(id);
    await this.cluster.resume(id);
  }

  partition(groups: readonly (readonly string[])[]): void {
    this.cluster.partition(groups);
  }

  ring(): void {
    this.cluster.ring();
  }

  heal(): void {
    this.cluster.heal();
  }

  slow(ms: number): void {
    this.degradedLinks ||= ms > 0;
    this.cluster.slow(ms);
  }

  lossy(p: number): void {
    this.degradedLinks ||= p > 0;
    this.cluster.lossy(p);
  }

  waitHealthy(timeoutMs: number): Promise<boolean> {
    return waitClusterServing(this.cluster, timeoutMs);
  }

  async recover(): Promise<void> {
    this.cluster.heal();
    if (this.degradedLinks) {
      this.cluster.slow(0);
      this.cluster.lossy(0);
      this.degradedLinks = false;
    }
    for (const id of [...this.paused]) await this.resume(id);
    for (const m of this.cluster.members()) {
      if (m.state === 'paused') await this.cluster.resume(m.id);
    }
    await Promise.all(
      this.cluster
        .members()
        .filter((m) => m.state === 'dead')
        .map((m) => this.cluster.restart(m.id)),
    );
  }

  stop(): Promise<void> {
    return this.cluster.stop();
  }
}
