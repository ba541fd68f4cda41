/**
 * What startMember() (member.ts) is given (MemberOptions) and what it returns inside the package
 * (MemberNode). Their own file so member.ts holds only the assembly of a member.
 */
import type { MemberHandle } from '../api.js';
import type { ClusterBackend } from '../cluster/cluster-backend.js';
import type { ClusterTlsOptions } from '../replication/cluster-tls.js';
import type { RaftConfig } from '../replication/raft/types.js';
import type { Replica } from '../replication/replica.js';
import type { PeerAddress } from '../replication/tcp-transport.js';
import type { BrokerNode, StartBrokerOptions } from './start-broker.js';

/** Options of {@link startMember}: one member of a cluster, in this process. */
export interface MemberOptions
  extends Omit<
    StartBrokerOptions,
    | 'backend'
    | 'dataDir'
    | 'store'
    | 'openProperties'
    | 'offeredCapabilities'
    | 'virtualSources'
    | 'clusterSource'
    | 'remoteConsumerCredit'
  > {
  /** This member's id (a key of `peers`). */
  id: string;
  /** Every member (this one included) and its CLUSTER address. */
  peers: Readonly<Record<string, PeerAddress>>;
  /** Cluster port to listen on (default: this member's own entry in `peers`). */
  clusterPort?: number;
  /** Address the cluster port binds (default: this member's own host in `peers`). */
  clusterHost?: string;
  /**
   * The cluster secret every member proves it holds on every member-to-member connection.
   * Absent: no secret (only for a cluster whose addresses are all loopback).
   */
  clusterSecret?: Uint8Array;
  /** Mutual TLS on the cluster port. */
  clusterTls?: ClusterTlsOptions;
  /** This member's store (Raft log, hard state, snapshots, learned member addresses). */
  dataDir: string;
  /** Host clients are told to dial (default: `host`, or this member's peers host when `host` is a wildcard). */
  advertiseHost?: string;
  /** Default 'quorate'. Members of another cluster id are refused. */
  clusterId?: string;
  /**
   * Raft timing. Defaults: election 400-800 ms (rides out event-loop stalls of a loaded machine),
   * heartbeat 50 ms.
   */
  raft?: Omit<RaftConfig, 'id' | 'members'>;
  /** Compact the log after this many applied entries. Default 10_000. */
  snapshotEvery?: number;
  /** A submit not applied within this is answered "outcome unknown". Default 5000 ms. */
  submitTimeoutMs?: number;
  /** Not quorate this long -> close clients (`not quorate`). Default 600 ms. */
  notQuorateGraceMs?: number;
  /** The leader releases the consumers of a member silent this long. Default 5000 ms. */
  consumerLeaseMs?: number;
  /** Storage failed (the member must stop: it cannot go on without durability). */
  onFatal?: (err: Error) => void;
  /**
   * Record `peers`' addresses over the ones recorded in `<dataDir>/cluster.json` (same ids only).
   * Without it a member whose peer addresses differ from the recorded ones refuses to start
   * (MemberConfigError). Default false.
   */
  updatePeers?: boolean;
}

/** What {@link startMember} returns inside the package: the public {@link MemberHandle} and its parts. */
export interface MemberNode extends MemberHandle {
  /** The AMQP server of this member, with its backend. */
  readonly broker: BrokerNode;
  /** The replicated backend the server commits through. */
  readonly backend: ClusterBackend;
  /** The Raft replica. */
  readonly replica: Replica;
}
