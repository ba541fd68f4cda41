/**
 * `quorate-broker node` as a real process refuses a membership it cannot get right: duplicate
 * ids or addresses in --peers, a --cluster-port that disagrees with its own entry, and a --peers
 * other than the one its data dir recorded on first start (unless --update-peers, same ids).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureClusterSecret } from '../../../../src/cluster-broker/replication/cluster-secret.js';
import { allocateFreePorts } from '../../../../src/cluster-broker/supervisor/ports.js';
import {
  type BrokerProcess,
  type LaunchOptions,
  launchBroker,
  outputAtExit,
  spawnBroker,
} from '../../../support/broker-process.js';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

/** stdin a pipe: a member watches it to stop when the test process goes away. */
const NODE: LaunchOptions = { stdin: 'pipe', keepStderrLines: Number.POSITIVE_INFINITY };

/** A member that starts: resolves once its ready line is printed, rejects if it exits first. */
function started(args: string[]): Promise<BrokerProcess> {
  return spawnBroker(['node', ...args], 60_000, NODE);
}

async function refused(args: string[]): Promise<string> {
  const run = await outputAtExit(launchBroker(['node', ...args], NODE));
  expect(run.code, run.stderr).toBe(2);
  return run.stderr;
}

/** Stops a member; its whole stderr. */
async function stop(run: BrokerProcess): Promise<string> {
  run.child.kill('SIGTERM');
  expect(await run.closed).toBe(0);
  return run.stderr.join('\n');
}

describe('node membership checks', () => {
  it('refuses duplicate ids, duplicate addresses and a disagreeing --cluster-port with exit 2', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'qb-peers-'));
    dirs.push(dir);
    const [a, b, c] = await allocateFreePorts(3);
    const common = ['--port', '0', '--data-dir', dir];
    const [dupId, dupAddress, port] = await Promise.all([
      refused(['--id', 'n1', '--peers', `n1=127.0.0.1:${a},n1=127.0.0.1:${b}`, ...common]),
      refused(['--id', 'n1', '--peers', `n1=127.0.0.1:${a},n2=127.0.0.1:${b},n3=127.0.0.1:${b}`, ...common]),
      refused([
        '--id',
        'n1',
        '--cluster-port',
        String(c),
        '--peers',
        `n1=127.0.0.1:${a},n2=127.0.0.1:${b},n3=127.0.0.1:${c}`,
        ...common,
      ]),
    ]);
    expect(dupId).toContain("--peers names member 'n1' twice");
    expect(dupAddress).toContain(`gives 'n2' and 'n3' the same address 127.0.0.1:${b}`);
    expect(port).toContain(
      `--cluster-port ${c} disagrees with this member's --peers entry n1=127.0.0.1:${a}: the other members dial ${a}`,
    );
  });

  it('records its peers on first start and refuses other --peers until --update-peers (same ids only)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'qb-recorded-'));
    dirs.push(dir);
    const [p1, p2, moved, p3] = await allocateFreePorts(4);
    const peers = `n1=127.0.0.1:${p1},n2=127.0.0.1:${p2}`;
    const secretFile = await ensureClusterSecret(await mkdtemp(join(tmpdir(), 'qb-secret-')));
    dirs.push(dirname(secretFile));
    const args = (list: string, ...extra: string[]) => [
      '--cluster-secret-file',
      secretFile,
      '--id',
      'n1',
      '--port',
      '0',
      '--peers',
      list,
      '--data-dir',
      dir,
      ...extra,
    ];

    const first = await started(args(peers));
    // two members: it starts, with a warning at the default log level
    expect(await stop(first)).toMatch(/WARN an even number of members \(2\)/);
    const record = JSON.parse(await readFile(join(dir, 'cluster.json'), 'utf8')) as Record<string, unknown>;
    expect(record).toMatchObject({
      clusterId: 'quorate',
      memberId: 'n1',
      peers: { n1: `127.0.0.1:${p1}`, n2: `127.0.0.1:${p2}` },
    });

    const movedPeers = `n1=127.0.0.1:${p1},n2=127.0.0.1:${moved}`;
    const [otherAddress, extraMember, otherCluster] = await Promise.all([
      refused(args(movedPeers)),
      refused(args(`${peers},n3=127.0.0.1:${p3}`, '--update-peers')),
      refused(args(peers, '--cluster-id', 'other')),
    ]);
    expect(otherAddress).toContain(`n2: 127.0.0.1:${p2} -> 127.0.0.1:${moved}`);
    expect(otherAddress).toContain('--update-peers');
    expect(extraMember).toContain('added n3');
    expect(extraMember).toContain('the set of member ids cannot change in place');
    expect(otherCluster).toContain("belongs to cluster 'quorate', not 'other'");

    const updated = await started(args(movedPeers, '--update-peers'));
    expect(await stop(updated)).toContain('recorded new member addresses');
    // the new addresses are the recorded ones now: a plain restart with them is accepted
    await stop(await started(args(movedPeers)));
  });
});
