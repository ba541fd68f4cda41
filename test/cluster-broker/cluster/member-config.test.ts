/** `--peers` parsing and the membership a member records in its data dir (the CLI test is in integration/). */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkOwnEntry, parsePeerList } from '../../../src/cluster-broker/cluster/peer-list.js';
import { checkRecordedMembership } from '../../../src/cluster-broker/cluster/recorded-membership.js';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describe('parsePeerList', () => {
  it('parses ids and addresses, IPv6 in brackets', () => {
    expect(parsePeerList('n1=127.0.0.1:6672, n2=[::1]:6673')).toEqual({
      n1: { host: '127.0.0.1', port: 6672 },
      n2: { host: '::1', port: 6673 },
    });
  });

  it.each([
    ['n1=a:1,n1=b:2', /names member 'n1' twice/],
    ['n1=Host:1,n2=host:1', /same address host:1/],
    ['n1=a:0', /bad port/],
    ['n1=a:99999', /bad port/],
    ['n1=a:1x', /bad port/],
    ['n1', /bad entry/],
    ['=a:1', /bad entry/],
    ['n 1=a:1', /bad member id/],
    ['', /names no member/],
  ])('refuses %j', (spec, message) => {
    expect(() => parsePeerList(spec)).toThrow(message);
  });

  it('checkOwnEntry: this member named, --cluster-port its own port', () => {
    const peers = parsePeerList('n1=h:1,n2=h:2');
    expect(() => checkOwnEntry('n1', peers, 1)).not.toThrow();
    expect(() => checkOwnEntry('n1', peers, undefined)).not.toThrow();
    expect(() => checkOwnEntry('n3', peers, undefined)).toThrow(/names no member 'n3'/);
    expect(() => checkOwnEntry('n1', peers, 2)).toThrow(/--cluster-port 2 disagrees/);
  });
});

describe('checkRecordedMembership', () => {
  const peers = parsePeerList('n1=h:1,n2=h:2,n3=h:3');
  const now = { clusterId: 'c', memberId: 'n1', peers };

  it('records on first start, accepts the same, refuses another cluster, member, id set or address', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'qb-membership-'));
    dirs.push(dir);
    expect(await checkRecordedMembership(dir, now)).toEqual({ outcome: 'created', changes: [] });
    expect(await checkRecordedMembership(dir, now)).toEqual({ outcome: 'same', changes: [] });
    await expect(checkRecordedMembership(dir, { ...now, clusterId: 'd' })).rejects.toThrow(
      /belongs to cluster 'c', not 'd'/,
    );
    await expect(checkRecordedMembership(dir, { ...now, memberId: 'n2' })).rejects.toThrow(
      /data dir of member 'n1', not 'n2'/,
    );
    await expect(
      checkRecordedMembership(dir, { ...now, peers: parsePeerList('n1=h:1,n2=h:2') }, true),
    ).rejects.toThrow(/removed n3/);
    const moved = { ...now, peers: parsePeerList('n1=h:1,n2=h:2,n3=g:3') };
    await expect(checkRecordedMembership(dir, moved)).rejects.toMatchObject({
      name: 'MemberConfigError',
      condition: 'amqp:invalid-field',
      description: expect.stringContaining('n3: h:3 -> g:3'),
    });
    expect(await checkRecordedMembership(dir, moved, true)).toEqual({
      outcome: 'updated',
      changes: ['n3: h:3 -> g:3'],
    });
    expect(JSON.parse(await readFile(join(dir, 'cluster.json'), 'utf8')).peers.n3).toBe('g:3');
  });

  it('a damaged record is refused, not overwritten', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'qb-membership-'));
    dirs.push(dir);
    await writeFile(join(dir, 'cluster.json'), '{"version":1,');
    await expect(checkRecordedMembership(dir, now)).rejects.toThrow(/is not valid JSON/);
    expect(await readFile(join(dir, 'cluster.json'), 'utf8')).toBe('{"version":1,');
  });
});
