/**
 * What a member records in its data dir on first start (`<dataDir>/cluster.json`): its cluster
 * id, its own id and every member's cluster address. Later starts must agree with it, so a wrong
 * `--peers` (another cluster's list, a missing or extra member, a mistyped address) stops the
 * member instead of letting it vote in a cluster it was never part of.
 *
 * On purpose changes: the Raft core has static membership, so the set of ids never changes in
 * place. A member's ADDRESS may (a member replaced on a new host, same id): start every member
 * once with the new `--peers` and `updatePeers` (`--update-peers`), which records the new
 * addresses. Adding or removing ids means a new cluster (new data dirs). See docs/production.md.
 */
import { open, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { FILE_MODE } from '../files/file-modes.js';
import type { PeerAddress } from '../replication/tcp-transport.js';
import { fsyncDir } from '../store/index.js';
import { MemberConfigError } from './errors.js';
import { peerAddressKey } from './peer-list.js';

export const MEMBERSHIP_RECORD_FILE = 'cluster.json';

interface MembershipRecord {
  version: 1;
  clusterId: string;
  memberId: string;
  /** id -> `host:port` */
  peers: Record<string, string>;
}

export interface MembershipCheck {
  /** 'created': first start; 'same': as recorded; 'updated': new addresses recorded on purpose. */
  outcome: 'created' | 'same' | 'updated';
  /** With 'updated': `id: old -> new` for each changed address. */
  changes: string[];
}

function recordOf(
  clusterId: string,
  memberId: string,
  peers: Readonly<Record<string, PeerAddress>>,
): MembershipRecord {
  const out: Record<string, string> = {};
  for (const id of Object.keys(peers).sort()) out[id] = peerAddressKey(peers[id]!);
  return { version: 1, clusterId, memberId, peers: out };
}

async function writeRecord(dataDir: string, record: MembershipRecord): Promise<void> {
  const path = join(dataDir, MEMBERSHIP_RECORD_FILE);
  const tmp = `${path}.tmp`;
  const fh = await open(tmp, 'w', FILE_MODE);
  try {
    await fh.writeFile(`${JSON.stringify(record, null, 2)}\n`);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, path);
  await fsyncDir(dataDir);
}

function parseRecord(path: string, text: string): MembershipRecord {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (err) {
    throw new MemberConfigError(
      `${path} is not valid JSON (${(err as Error).message}); restore it or fix it by hand`,
    );
  }
  const r = v as Partial<MembershipRecord>;
  const ok =
    r !== null &&
    typeof r === 'object' &&
    r.version === 1 &&
    typeof r.clusterId === 'string' &&
    typeof r.memberId === 'string' &&
    typeof r.peers === 'object' &&
    r.peers !== null &&
    Object.values(r.peers).every((a) => typeof a === 'string');
  if (!ok) throw new MemberConfigError(`${path} is not a membership record; restore it or fix it by hand`);
  return r as MembershipRecord;
}

/**
 * Records the membership on first start; afterwards refuses (MemberConfigError) a different
 * cluster id, member id or set of member ids, and different addresses unless `updatePeers`.
 */
export async function checkRecordedMembership(
  dataDir: string,
  now: { clusterId: string; memberId: string; peers: Readonly<Record<string, PeerAddress>> },
  updatePeers = false,
): Promise<MembershipCheck> {
  const path = join(dataDir, MEMBERSHIP_RECORD_FILE);
  const wanted = recordOf(now.clusterId, now.memberId, now.peers);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    await writeRecord(dataDir, wanted);
    return { outcome: 'created', changes: [] };
  }
  const had = parseRecord(path, text);
  if (had.clusterId !== wanted.clusterId) {
    throw new MemberConfigError(
      `${dataDir} belongs to cluster '${had.clusterId}', not '${wanted.clusterId}': use this member's own data dir, or a new one for a new cluster`,
    );
  }
  if (had.memberId !== wanted.memberId) {
    throw new MemberConfigError(
      `${dataDir} is the data dir of member '${had.memberId}', not '${wanted.memberId}': give each member its own data dir`,
    );
  }
  const oldIds = Object.keys(had.peers).sort();
  const newIds = Object.keys(wanted.peers);
  const added = newIds.filter((id) => had.peers[id] === undefined);
  const removed = oldIds.filter((id) => wanted.peers[id] === undefined);
  if (added.length > 0 || removed.length > 0) {
    const diff = [
      ...(added.length ? [`added ${added.join(', ')}`] : []),
      ...(removed.length ? [`removed ${removed.join(', ')}`] : []),
    ].join('; ');
    throw new MemberConfigError(
      `--peers names other members than ${path} recorded on first start (${diff}; recorded: ${oldIds.join(', ')}). ` +
        'Membership is static: the set of member ids cannot change in place (see "Replacing a member" in docs/production.md)',
    );
  }
  const changes = newIds
    .filter((id) => had.peers[id] !== wanted.peers[id])
    .map((id) => `${id}: ${had.peers[id]} -> ${wanted.peers[id]}`);
  if (changes.length === 0) return { outcome: 'same', changes };
  if (!updatePeers) {
    throw new MemberConfigError(
      `--peers gives other addresses than ${path} recorded (${changes.join('; ')}). ` +
        'If a member moved on purpose, start each member once with the new --peers and --update-peers',
    );
  }
  await writeRecord(dataDir, wanted);
  return { outcome: 'updated', changes };
}
