/**
 * The line that ends a member's recovery is at the level of what began it
 * (docs/production.md#damaged-cluster-member): a blank member (a new store, logged at info) that the others'
 * first election left out is caught up at info, since a clean cluster start prints no warning;
 * a member whose store was damaged (logged at error) ends at warn. Three real Replicas on real
 * files, joined by an in-memory network the test can cut.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import type { Message } from '../../../src/cluster-broker/replication/raft/types.js';
import { Replica } from '../../../src/cluster-broker/replication/replica.js';
import { waitFor } from '../../support/net.js';

const IDS = ['n1', 'n2', 'n3'] as const;
const dirs: string[] = [];
const open: Replica[] = [];
afterEach(async () => {
  for (const r of open.splice(0)) await r.close();
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

interface Line {
  level: 'info' | 'warn' | 'error';
  member: string;
  msg: string;
}

/** Three members; `cutOff` decides which messages the network drops at the moment. */
async function cluster(dataDirs: Record<string, string>, cutOff: (m: Message) => boolean) {
  const lines: Line[] = [];
  const inbox = new Map<string, (m: Message) => void>();
  const replicas = new Map<string, Replica>();
  for (const id of IDS) {
    const log =
      (level: Line['level']) =>
      (_fields: unknown, msg?: string): void =>
        void lines.push({ level, member: id, msg: msg ?? '' });
    const replica = await Replica.start(
      {
        id,
        clusterId: 'c',
        members: Object.fromEntries(IDS.map((m) => [m, { host: '127.0.0.1', port: 1 }])),
        dataDir: dataDirs[id]!,
        stateMachine: { apply: () => {}, restore: () => {} },
        logger: { info: log('info'), warn: log('warn'), error: log('error') },
      },
      {
        transport: (onMessage) => {
          inbox.set(id, onMessage);
          return {
            start: async () => 0,
            // delivered on a later turn, as a socket would
            send: (m) => void setImmediate(() => !cutOff(m) && inbox.get(m.to)?.(m)),
            close: async () => void inbox.delete(id),
          };
        },
      },
    );
    open.push(replica);
    replicas.set(id, replica);
  }
  // the members run on their real timers; a generous deadline for a loaded machine
  const until = (what: string, done: () => boolean): Promise<void> =>
    waitFor(done, { timeoutMs: 30_000, what }).catch((e: unknown) => {
      const states = [...replicas].map(([id, r]) => `${id}: ${r.role}, recovering ${r.recovering}`);
      throw new Error(`${(e as Error).message}; ${states.join('; ')}; log: ${JSON.stringify(lines)}`);
    });
  return { replicas, lines, until };
}

async function freshDirs(): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const id of IDS) {
    out[id] = await mkdtemp(join(tmpdir(), `quorate-recovery-log-${id}-`));
    dirs.push(out[id]);
  }
  return out;
}

it('a blank member caught up after the others formed the cluster logs it at info, with no warning', async () => {
  // n1 never hears an answer to its own vote requests: its answers to theirs let n2 and n3 see
  // that every member is blank and form the cluster, but nothing tells n1 that the others are, so
  // it stays blank until the leader has caught it up (what a clean start does when n1's answers
  // come late)
  const { replicas, lines, until } = await cluster(
    await freshDirs(),
    (m) => m.to === 'n1' && m.type === 'vote-response',
  );
  // the line comes when the member has written the end of its recovery
  const n1Lines = (): string[] => lines.filter((l) => l.member === 'n1').map((l) => l.msg);
  await until('n1 caught up by a leader among n2 and n3', () => n1Lines().length >= 2);
  expect(replicas.get('n1')!.recovering).toBe(null);
  expect(n1Lines()[1]).toBe(
    'replication: joined the cluster (caught up from the leader); this member votes and counts toward commit',
  );
  expect(lines.filter((l) => l.level !== 'info')).toEqual([]);
}, 120_000);

it('a member whose store was damaged ends its recovery at warn', async () => {
  const dataDirs = await freshDirs();
  {
    const first = await cluster(dataDirs, () => false);
    const leader = (): Replica | undefined => [...first.replicas.values()].find((r) => r.isLeader());
    await first.until('a leader', () => leader() !== undefined);
    await leader()!.propose(new Uint8Array([1]));
    await first.until('every member past the new-cluster start', () =>
      [...first.replicas.values()].every((r) => r.recovering === null),
    );
    for (const r of open.splice(0)) await r.close();
  }
  // n3's vote record is damaged: it quarantines its store and recovers from the others
  await writeFile(join(dataDirs.n3!, 'meta.json'), '{ not json');
  const second = await cluster(dataDirs, () => false);
  expect(second.replicas.get('n3')!.recovering).toBe('damaged');
  await second.until('n3 recovered', () => second.lines.some((l) => l.member === 'n3' && l.level === 'warn'));
  expect(second.lines).toContainEqual({
    level: 'warn',
    member: 'n3',
    msg: 'replication: recovery finished (caught up from the leader); this member votes and counts toward commit again',
  });
}, 120_000);
