/**
 * The monitoring endpoints of a 3-member cluster (real processes from startCluster, each with its
 * own HTTP port): every member's view of the others, lag growing on a killed follower and
 * shrinking after its restart, a new leader after the leader's kill, /readyz turning 503 on a
 * member cut off from the majority within 2 s, /metrics parsing on every member.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterHandle } from '../../../../src/broker.js';
import { runStatusCommand } from '../../../../src/cluster-broker/cli/status-command.js';
import type { MemberEntry, Overview } from '../../../../src/cluster-broker/http/types.js';
import {
  range,
  sendVia,
  startTestCluster,
  waitLeader,
  waitServing,
} from '../../../cluster-broker/cluster/cluster-support.js';
import { parsePrometheusText, sampleValue } from '../../../cluster-broker/http/prom-text.js';
import { waitFor } from '../../../support/net.js';

let handle: ClusterHandle;

function httpOf(id: string): string {
  return handle.members().find((m) => m.id === id)!.httpUrl!;
}

async function overview(id: string): Promise<Overview> {
  const res = await fetch(`${httpOf(id)}/api/overview`);
  expect(res.status).toBe(200);
  return (await res.json()) as Overview;
}

/** `quorate-broker status URL`, in process: [exit code, stdout]. */
async function statusCommand(...argv: string[]): Promise<[number, string]> {
  let out = '';
  const code = await runStatusCommand(argv, {
    stdout: { write: (c: string) => (out += c) },
    stderr: { write: (c: string) => (out += c) },
  });
  return [code, out];
}

async function readyStatus(id: string): Promise<number> {
  return (await fetch(`${httpOf(id)}/readyz`)).status;
}

beforeAll(async () => {
  handle = await startTestCluster();
  await waitServing(handle);
});

afterAll(async () => {
  await handle?.stop();
});

/** While `victim` is down: the leader and the third member see it unreachable and behind. */
async function followerDown(leader: string, victim: string): Promise<void> {
  await sendVia(handle, leader, 'mon-lag', range('lag', 30));
  let seen: MemberEntry | undefined;
  await waitFor(
    async () => {
      seen = (await overview(leader)).members.find((m) => m.id === victim);
      return seen?.reachable === false && (seen.lag ?? 0) >= 30;
    },
    { timeoutMs: 15_000, what: `the leader to see ${victim} down and behind` },
  );
  const survivor = handle.ids.find((x) => x !== leader && x !== victim)!;
  // `status` given only the survivor's URL follows its member list and reports the dead one
  const [code, table] = await statusCommand(httpOf(survivor));
  expect(code).toBe(1);
  const lines = table.split('\n');
  expect(lines.find((l) => l.startsWith(`${leader} `))).toMatch(
    new RegExp(`^${leader}\\s+leader\\s+${leader}\\s`),
  );
  expect(lines.find((l) => l.startsWith(`${victim} `))).toContain('unreachable');
  expect(lines.find((l) => l.startsWith(`${survivor} `))).toMatch(/\sfollower\s/);
  expect(table).toContain(`as ${leader} (leader) sees the members:`);
  // the dead member's clients are unknown: named, never counted as 0
  expect(table).toMatch(
    new RegExp(`\nclients of the cluster: \\d+ connections, \\d+ consumers \\(not counted: ${victim}\\)\n`),
  );
  const fromSurvivor = (await overview(survivor)).members.find((m) => m.id === victim)!;
  expect(fromSurvivor.reachable).toBe(false);
  expect(fromSurvivor.lag).toBeGreaterThanOrEqual(30);
}

describe('cluster monitoring endpoints', () => {
  it('every member has an HTTP URL and sees all three members, the same leader, and their addresses', async () => {
    expect(handle.httpUrls).toHaveLength(3);
    expect(handle.members().map((m) => m.httpUrl)).toEqual(handle.httpUrls);
    const leader = await waitLeader(handle);
    await waitFor(
      async () => {
        const all = await Promise.all(handle.ids.map(overview));
        return all.every(
          (o) =>
            o.leader === leader &&
            o.members.every((m) => m.reachable && m.httpUrl !== null && m.url !== null),
        );
      },
      { timeoutMs: 20_000, what: 'every member to see everyone reachable' },
    );
    for (const id of handle.ids) {
      const o = await overview(id);
      expect(o.member).toBe(id);
      expect(o.role).toBe(id === leader ? 'leader' : 'follower');
      expect(o).toMatchObject({ quorate: true, serving: true, leader });
      expect(o.members.map((m) => m.id)).toEqual(handle.ids);
      // what the others learned of each member's endpoints is what the supervisor reports
      for (const m of o.members) {
        expect(m.httpUrl).toBe(httpOf(m.id));
        expect(m.url).toBe(handle.urls[handle.ids.indexOf(m.id)]);
      }
      expect(await readyStatus(id)).toBe(200);
      const metrics = parsePrometheusText(await (await fetch(`${httpOf(id)}/metrics`)).text());
      expect(sampleValue(metrics, 'quorate_raft_is_leader')).toBe(id === leader ? 1 : 0);
      expect(sampleValue(metrics, 'quorate_raft_term')).toBe(o.term);
      for (const peer of handle.ids.filter((x) => x !== id)) {
        expect(sampleValue(metrics, 'quorate_raft_peer_reachable', { member: peer })).toBe(1);
        expect(
          sampleValue(metrics, 'quorate_raft_peer_lag_entries', { member: peer }),
        ).toBeGreaterThanOrEqual(0);
      }
    }
  });

  it('a killed follower shows unreachable with a growing lag, then catches up after its restart', async () => {
    const leader = await waitLeader(handle);
    const victim = handle.ids.find((x) => x !== leader)!;
    await handle.kill(victim);
    try {
      await followerDown(leader, victim);
    } finally {
      // also after a failure above: the next tests need every member
      await handle.restart(victim);
    }
    await waitServing(handle, [victim]);
    await waitFor(async () => (await statusCommand(httpOf(victim)))[0] === 0, {
      timeoutMs: 30_000,
      what: '`status` to report every member serving',
    });
    await waitFor(
      async () => {
        const m = (await overview(leader)).members.find((x) => x.id === victim);
        return m?.reachable === true && m.lag !== null && m.lag < 30;
      },
      { timeoutMs: 30_000, what: `${victim} reachable and caught up` },
    );
  });

  it('after the leader is killed the survivors name a new leader in a later term', async () => {
    const leader = await waitLeader(handle);
    const before = await overview(leader);
    const survivors = handle.ids.filter((x) => x !== leader);
    await handle.kill(leader);
    try {
      await waitFor(
        async () => {
          const views = await Promise.all(survivors.map(overview));
          return views.every(
            (o) =>
              o.leader !== null &&
              o.leader !== leader &&
              o.leader === views[0]!.leader &&
              o.term > before.term &&
              o.serving &&
              o.members.find((m) => m.id === leader)?.reachable === false,
          );
        },
        { timeoutMs: 20_000, what: 'a new leader agreed on by the survivors' },
      );
      for (const id of survivors) {
        const metrics = parsePrometheusText(await (await fetch(`${httpOf(id)}/metrics`)).text());
        expect(sampleValue(metrics, 'quorate_raft_leader_changes_total')).toBeGreaterThanOrEqual(1);
        expect(sampleValue(metrics, 'quorate_raft_peer_reachable', { member: leader })).toBe(0);
        expect(await readyStatus(id)).toBe(200);
      }
    } finally {
      await handle.restart(leader);
    }
    await waitServing(handle);
  });

  it('/readyz turns 503 on a member cut off from the majority within 2 s, and 200 after heal', async () => {
    const victim = handle.ids[0]!;
    const others = handle.ids.slice(1);
    await waitFor(async () => (await readyStatus(victim)) === 200, {
      timeoutMs: 30_000,
      what: `${victim} ready`,
    });
    handle.partition([[victim], others]);
    try {
      // the target is 2 s from the cut; polling every 50 ms
      await waitFor(async () => (await readyStatus(victim)) === 503, {
        timeoutMs: 2000,
        intervalMs: 50,
        what: `${victim} /readyz 503`,
      });
      expect(await (await fetch(`${httpOf(victim)}/healthz`)).status).toBe(200);
      const o = await overview(victim);
      expect(o.serving).toBe(false);
      expect(o.quorate).toBe(false);
      await waitFor(async () => (await Promise.all(others.map(readyStatus))).every((s) => s === 200), {
        timeoutMs: 20_000,
        what: 'the majority ready',
      });
    } finally {
      handle.heal();
    }
    await waitFor(async () => (await readyStatus(victim)) === 200, {
      timeoutMs: 30_000,
      what: `${victim} ready again`,
    });
  });
});
