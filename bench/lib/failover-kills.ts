/**
 * The failover bench's kill loop (bench/failover.ts): until `kills` are done, wait for every
 * member to serve, kill -9 (or SIGSTOP) the member the client is on, and time the next accepted
 * send; and which member leads, as the members name it in their Open.
 */

import { setTimeout as sleep } from 'node:timers/promises';
import type { ClusterHandle } from '../../src/broker.js';
import { connect } from '../../src/index.js';
import { failoverListFromOpenProperties } from '../../src/wire-extensions.js';
import { waitClusterServing } from '../../test/chaos/quorate-target.js';
import type { ClientUnderTest } from './failover-clients.js';

const KILL_TO_ACCEPT_TIMEOUT_MS = 30_000;

/** The member id every serving member names as leader in its Open (undefined: none agreed). */
async function leaderId(cluster: ClusterHandle): Promise<string | undefined> {
  const seen = new Set<string>();
  for (const m of cluster.members()) {
    try {
      const conn = await connect({ urls: [m.url], reconnect: false, timeoutMs: 3_000, idleTimeoutMs: 0 });
      const list = failoverListFromOpenProperties(conn.remoteOpen?.properties);
      await conn.close({ timeoutMs: 1_000 }).catch(() => undefined);
      const leader = list?.members.find((x) => x.leader === true);
      if (leader?.memberId) seen.add(leader.memberId);
    } catch {
      // not answering: no opinion
    }
  }
  return seen.size === 1 ? [...seen][0] : undefined;
}

export async function killLoop(
  cluster: ClusterHandle,
  client: ClientUnderTest,
  kills: number,
  log: (l: string) => void,
  hang: boolean,
): Promise<{ samples: number[]; leader: boolean[] }> {
  const samples: number[] = [];
  const leader: boolean[] = [];
  for (let k = 0; k < kills; k++) {
    if (!(await waitClusterServing(cluster, 60_000)))
      log('  (cluster not fully serving after 60 s; killing anyway)');
    await client.nextAccept(); // steady state: the producer is getting answers
    // who leads, asked first: asking takes a while, and the client's member is read just before
    // the stop (it may have moved meanwhile)
    const leaderNow = await leaderId(cluster);
    const port = client.currentPort();
    const victim = cluster.members().find((m) => m.amqpPort === port);
    if (!victim) {
      k--;
      await sleep(50);
      continue;
    }
    const wasLeader = leaderNow === victim.id;
    const t0 = performance.now();
    if (hang) await cluster.pause(victim.id);
    else await cluster.kill(victim.id, { restart: true });
    // acks read before the process was gone do not count: wait for one after the kill
    const next = await Promise.race([
      client.nextAccept(),
      sleep(KILL_TO_ACCEPT_TIMEOUT_MS).then(() => Number.NaN),
    ]);
    const ms = next - t0;
    if (hang) await cluster.resume(victim.id);
    samples.push(ms);
    leader.push(wasLeader);
    log(
      `  ${client.name} ${hang ? 'hang' : 'kill'} ${k + 1}/${kills}: ${victim.id}${wasLeader ? ' (leader)' : ''} -> next accepted send after ${ms.toFixed(1)} ms`,
    );
    for (const line of client.traceSince?.(t0) ?? []) log(`      ${line}`);
  }
  return { samples, leader };
}
