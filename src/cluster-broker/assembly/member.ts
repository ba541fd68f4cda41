/**
 * One cluster member in this process: the AMQP server (the single node's code) over a
 * ClusterBackend, the Raft replica with the broker's state machine, membership for clients, and
 * the timers that tie them together (status messages, serving watch, leader housekeeping).
 * See docs/cluster-member.md.
 */
import { join } from 'node:path';
import { runDueIntervals, sharedInterval } from '../../common/shared-interval.js';
import {
  FAILOVER_SERVER_LIST,
  type ListedMember,
  MEMBERSHIP_ADDRESS,
  MEMBERSHIP_CAPABILITY,
  memberListValue,
  notQuorateDescription,
} from '../../wire-extensions.js';
import { ClusterBackend } from '../cluster/cluster-backend.js';
import { ClusterStateMachine } from '../cluster/cluster-state-machine.js';
import {
  isValidMemberId,
  memberOf,
  memberOfProcess,
  newIncarnation,
  processKey,
} from '../cluster/consumer-keys.js';
import { ConsumerLease } from '../cluster/consumer-lease.js';
import { MemberConfigError } from '../cluster/errors.js';
import { FederationOwnership } from '../cluster/federation-owner.js';
import { MemberStatusSource } from '../cluster/member-status.js';
import { Membership, MembershipFeed } from '../cluster/membership.js';
import { peerSender } from '../cluster/peer-channel.js';
import { PeerCredit } from '../cluster/peer-credit.js';
import { checkOwnEntry, peerAddressKey } from '../cluster/peer-list.js';
import { type AppMessage, type MemberStatus, withAppMessages } from '../cluster/peer-wire.js';
import { checkRecordedMembership } from '../cluster/recorded-membership.js';
import { ServingWatch } from '../cluster/serving-watch.js';
import { secureDataDir } from '../files/file-modes.js';
import { Replica } from '../replication/replica.js';
import type { PeerAddress } from '../replication/tcp-transport.js';
import { binaryWireCodec } from '../replication/wire-binary.js';
import type { BrokerLogger } from '../server/options.js';
import type { MemberNode, MemberOptions } from './member-options.js';
import { startBroker } from './start-broker.js';

/**
 * Status messages, the serving watch and the leader's housekeeping run on one 100 ms timer shared
 * with the memory alarm (../../common/shared-interval.ts): one wake-up where there were three
 * (docs/cluster-member.md#timers).
 */
const STATUS_EVERY_MS = 100;
const WATCH_EVERY_MS = STATUS_EVERY_MS;
const HOUSEKEEPING_EVERY_MS = 1000;
const DEDUP_TRIM_EVERY_MS = 30_000;

/** `url` with its host replaced by the one clients are told to dial (not a wildcard bind address). */
function withHost(url: string, host: string): string {
  const u = new URL(url);
  u.hostname = host.includes(':') ? `[${host}]` : host;
  return u.origin;
}

function checkDistinctAddresses(peers: Readonly<Record<string, PeerAddress>>): void {
  const seen = new Map<string, string>();
  for (const [peer, address] of Object.entries(peers)) {
    const key = peerAddressKey(address);
    const other = seen.get(key);
    if (other !== undefined) {
      throw new MemberConfigError(`peers '${other}' and '${peer}' have the same address ${key}`);
    }
    seen.set(key, peer);
  }
}

/**
 * Starts one cluster member in this process (docs/cluster-member.md); resolves once it listens.
 * It serves clients once the cluster has a quorum and it has caught up. Throws
 * MemberConfigError when its configuration cannot be right (see peer-list.ts and
 * recorded-membership.ts); nothing is started then.
 */
export async function startMember(opts: MemberOptions): Promise<MemberNode> {
  const {
    id,
    peers,
    clusterPort,
    clusterHost,
    clusterSecret,
    clusterTls,
    dataDir,
    advertiseHost,
    clusterId = 'quorate',
    raft,
    snapshotEvery,
    submitTimeoutMs,
    notQuorateGraceMs,
    consumerLeaseMs = 5000,
    onFatal,
    updatePeers = false,
    ...serverOpts
  } = opts;
  const logger: BrokerLogger = serverOpts.logger ?? {};
  const ids = Object.keys(peers).sort();
  for (const m of ids)
    if (!isValidMemberId(m)) throw new MemberConfigError(`bad member id '${m}' (letters, digits, _ . -)`);
  checkOwnEntry(id, peers, clusterPort);
  checkDistinctAddresses(peers);
  const own = peers[id]!;
  if (ids.length % 2 === 0) {
    logger.warn?.(
      { members: ids.length },
      `an even number of members (${ids.length}) tolerates no more failures than ${ids.length - 1}`,
    );
  }
  await secureDataDir(dataDir, logger);
  const recorded = await checkRecordedMembership(dataDir, { clusterId, memberId: id, peers }, updatePeers);
  if (recorded.outcome === 'updated') {
    logger.warn?.(
      { member: id, changes: recorded.changes },
      'cluster: recorded new member addresses (--update-peers)',
    );
  }

  const incarnation = newIncarnation();
  const origin = processKey(id, incarnation);
  const backend = new ClusterBackend({
    memberId: id,
    origin,
    ...(submitTimeoutMs !== undefined ? { submitTimeoutMs } : {}),
  });
  const sm = new ClusterStateMachine({
    applied: (o, seq, outcome) => backend.onApplied(o, seq, outcome),
    available: (q) => backend.emit('available', q),
    claimed: (link, claimant) => backend.onClaimed(link, claimant),
    corrupt: (index, err) => logger.error?.({ index, err }, 'cluster: undecodable log entry skipped'),
    federationOwner: (owner) => ownership?.onOwner(owner),
  });
  let ownership: FederationOwnership | undefined;
  const peerCredit = new PeerCredit();

  // Membership needs our client port: bind the AMQP listener first (refusing clients until serving).
  let replica: Replica | undefined;
  let membership: Membership | undefined;
  const listNow = (): ListedMember[] =>
    membership?.list({
      selfServing: backend.serving && replica?.isQuorate() === true,
      leaderId: replica?.leaderId ?? null,
      now: Date.now(),
    }) ?? [];
  const feed = new MembershipFeed(listNow);
  let advertisedHttpUrl: string | null = null;
  const statusSource = new MemberStatusSource({
    id,
    clusterId,
    memberIds: ids,
    replica: () => replica,
    membership: () => membership,
    backend,
    httpUrl: () => advertisedHttpUrl,
  });
  const broker = await startBroker({
    diskPath: dataDir,
    ...serverOpts,
    clusterId,
    backend,
    remoteConsumerCredit: (queue) => peerCredit.total(queue, Date.now()),
    clusterSource: () => statusSource,
    openProperties: () => ({ [FAILOVER_SERVER_LIST]: memberListValue(listNow()) }),
    offeredCapabilities: () => [MEMBERSHIP_CAPABILITY],
    virtualSources: new Map([[MEMBERSHIP_ADDRESS, feed]]),
  });
  const wildcard = broker.host === '0.0.0.0' || broker.host === '::';
  const clientHost = advertiseHost ?? (wildcard ? own.host : broker.host);
  membership = new Membership({
    selfId: id,
    memberIds: ids,
    self: {
      host: clientHost,
      port: broker.port,
      scheme: serverOpts.tls ? 'amqps' : 'amqp',
      ...(broker.wsUrl !== undefined ? { wsUrl: withHost(broker.wsUrl, clientHost) } : {}),
    },
    dataDir,
  });
  const mship = membership;
  if (broker.httpUrl !== undefined) {
    // tell the others the address clients are told to dial, not a wildcard bind address
    advertisedHttpUrl = withHost(broker.httpUrl, clientHost);
  }

  const onApp = (m: AppMessage): void => {
    if (m.to !== id) return;
    if (m.kind === 'forward') backend.onForward(m.request);
    else {
      mship.noteStatus(m.from, m.status, Date.now());
      peerCredit.note(m.from, m.status.credit, Date.now());
    }
  };
  try {
    replica = await Replica.start({
      id,
      clusterId,
      members: peers,
      listen: { host: clusterHost ?? own.host, port: clusterPort ?? own.port },
      ...(clusterSecret ? { secret: clusterSecret } : {}),
      ...(clusterTls ? { tls: clusterTls } : {}),
      dataDir: join(dataDir, 'raft'),
      quarantineDir: join(dataDir, 'quarantine'),
      stateMachine: sm,
      codec: withAppMessages(binaryWireCodec, onApp),
      raft: { electionTimeoutMin: 400, electionTimeoutMax: 800, heartbeatInterval: 50, ...raft },
      ...(snapshotEvery !== undefined ? { snapshotEvery } : {}),
      logger,
    });
  } catch (err) {
    await broker.stop();
    throw err;
  }
  const rep = replica;
  backend.attach(sm, rep, peerSender(rep));
  if (broker.federationLinks !== undefined) {
    ownership = new FederationOwnership({
      self: origin,
      links: broker.federationLinks,
      backend,
      replica: rep,
      logger,
    });
  }
  rep.on('role', (s) => {
    logger.info?.({ member: id, role: s.role, term: s.term, leader: s.leaderId }, 'cluster: role');
    backend.onRole(s);
    statusSource.noteLeader(s.leaderId);
    feed.refresh();
  });
  // levels by what an operator must act on (docs/production.md#logging): a member that stops
  // serving after it served (quorum lost, deposed, storage failed) is a warning; starting up is not
  let hasServed = false;
  backend.on('serving', (on, reason) => {
    if (on) {
      hasServed = true;
      logger.info?.({ member: id, serving: on, reason }, 'cluster: serving');
    } else if (hasServed) {
      logger.warn?.({ member: id, serving: on, reason }, `cluster: not serving: ${reason}`);
    } else {
      logger.info?.({ member: id, serving: on, reason }, 'cluster: not serving yet');
    }
  });
  rep.on('error', (err) => {
    backend.setServing(false, notQuorateDescription('storage failed'));
    // the replica closes itself: no apply will answer the requests in flight, so they end now
    // (outcome unknown) rather than at their deadline
    backend.close();
    onFatal?.(err);
  });
  // the process's periodic work (status messages, the watch, the memory alarm...) rides on the
  // Raft heartbeats' wake-ups when it is due (docs/cluster-member.md#timers); a microtask later, so
  // that it runs outside the replica's handler and its messages go out in the same write
  rep.on('heartbeat', () => queueMicrotask(runDueIntervals));

  const watch = new ServingWatch(
    {
      memberId: id,
      incarnation,
      memberCount: ids.length,
      ...(notQuorateGraceMs !== undefined ? { graceMs: notQuorateGraceMs } : {}),
    },
    rep,
    mship,
    backend,
  );
  const startedAt = Date.now();
  const self = mship.list({ selfServing: false, leaderId: null, now: startedAt }).find((m) => m.id === id)!;
  const sendStatus = (): void => {
    const status: MemberStatus = {
      host: self.host,
      port: self.port,
      scheme: self.scheme,
      ...(self.wsUrl !== undefined ? { wsUrl: self.wsUrl } : {}),
      serving: backend.serving,
      leaderId: rep.leaderId,
      term: rep.term,
      commitIndex: rep.commitIndex,
    };
    // the others' /api/overview counts this member's clients from this (docs/monitoring.md#cluster-counts)
    const { connections, consumers } = broker.server.stats();
    status.connections = connections;
    status.consumers = consumers;
    if (advertisedHttpUrl !== null) status.httpUrl = advertisedHttpUrl;
    const federated = broker.federationLinks?.queues();
    if (federated !== undefined)
      status.credit = Object.fromEntries(federated.map((q) => [q, broker.server.unusedConsumerCredit(q)]));
    const send = peerSender(rep);
    for (const peer of ids) if (peer !== id) send({ kind: 'status', from: id, to: peer, status });
  };

  let lastTrim = startedAt;
  const lease = new ConsumerLease(consumerLeaseMs);
  /** Leader only: time-driven events (expiry, dedup age) and consumers of silent members. */
  const housekeeping = (now: number): void => {
    if (!rep.isLeader() || !rep.isQuorate()) return;
    const state = sm.state;
    const due = state.nextExpiryAt();
    if (
      (due !== undefined && due <= now) ||
      (now - lastTrim >= DEDUP_TRIM_EVERY_MS && state.queues.size > 0)
    ) {
      lastTrim = now;
      backend.request({ kind: 'event', event: { type: 'expire', leaderTime: now } }).catch(() => {});
    }
    // members holding consumers, or the owner links of temporary queues (docs/topics.md#owner-gone)
    const holders = new Set(state.listConsumers().map((c) => memberOf(c)));
    for (const { holder } of state.ownedQueues())
      if (holder !== undefined) holders.add(memberOfProcess(holder));
    const held = ids.filter((peer) => peer !== id && holders.has(peer));
    const silentFor = (peer: string): number => mship.silentFor(peer, now);
    for (const { member, silentMs } of lease.due(held, silentFor, watch.awakeSince ?? now, now)) {
      logger.info?.({ member, silentMs }, 'cluster: releasing the consumers of a silent member');
      backend.request({ kind: 'release-owner', member, keep: '' }).catch(() => {});
    }
  };

  let lastHousekeeping = startedAt;
  const stopStatus = sharedInterval(STATUS_EVERY_MS, sendStatus);
  const stopWatch = sharedInterval(WATCH_EVERY_MS, () => {
    const now = Date.now();
    watch.tick(now);
    feed.refresh();
    ownership?.tick();
    if (now - lastHousekeeping >= HOUSEKEEPING_EVERY_MS) {
      lastHousekeeping = now;
      housekeeping(now);
    }
  });
  sendStatus();
  watch.tick(Date.now());

  let stopped: Promise<void> | undefined;
  return {
    id,
    incarnation,
    amqpPort: broker.port,
    clusterPort: rep.port,
    url: broker.url,
    wsUrl: broker.wsUrl,
    httpUrl: broker.httpUrl,
    broker,
    backend,
    replica: rep,
    members: listNow,
    stop() {
      stopped ??= (async () => {
        stopStatus();
        stopWatch();
        backend.setServing(false, notQuorateDescription('member stopping'));
        await broker.stop();
        backend.close();
        await rep.close();
      })();
      return stopped;
    },
  };
}
