/**
 * Replica: the real driver of one member. It feeds the RaftCore with TCP messages and the clock,
 * and handles each Ready in the required order: persist (FileStorage, fsync) -> send (TCP) ->
 * apply (the application's StateMachine) -> advance. While one Ready is being made durable, new
 * proposals and messages accumulate in the core and go into the next Ready together: that is the
 * group commit. What depends on no write (the leader's appends and heartbeats, a follower's
 * heartbeat answers: RaftCore.takeEagerMessages) goes out at once, and before each Ready is taken.
 *
 * This file is its API (start, state for the broker, propose, close); the class is a chain, one job
 * per file: replica-fields.ts (every field, the constructor), replica-ready.ts (the Ready loop)
 * and replica-inputs.ts (peer messages, the timer, kick). Its types are in replica-types.ts.
 */
import type { LatencyHistogram } from '../files/latency-histogram.js';
import { NotLeaderError, ReplicationError } from './errors.js';
import { FileStorage, type StoreDamage } from './file-storage.js';
import { assertEntryFits } from './log-records.js';
import type { RecoveryReason, Role } from './raft/types.js';
import { ReplicaInputs } from './replica-inputs.js';
import { type ReplicaSeams, type TransportFactory, timeoutTimer } from './replica-seams.js';
import type { Committed, ReplicaOptions } from './replica-types.js';
import { TcpTransport } from './tcp-transport.js';
import { amqpWireCodec } from './wire.js';

export type { Committed, ReplicaEvents, ReplicaOptions, StateMachine } from './replica-types.js';

export class Replica extends ReplicaInputs {
  /**
   * Recover the store, listen, connect to peers and start the timer. `seams` replace the TCP
   * transport and the timer (the deterministic simulation; replica-seams.ts).
   */
  static async start(opts: ReplicaOptions, seams: ReplicaSeams = {}): Promise<Replica> {
    const storage = await FileStorage.open({
      dir: opts.dataDir,
      ...(opts.quarantineDir !== undefined ? { quarantineDir: opts.quarantineDir } : {}),
      clusterId: opts.clusterId,
      memberId: opts.id,
      ...(opts.groupCommit !== undefined ? { groupCommit: opts.groupCommit } : {}),
      ...(opts.logger ? { logger: opts.logger } : {}),
      ...(opts.fs ? { fs: opts.fs } : {}),
    });
    let replica: Replica | undefined;
    const transport = (seams.transport ?? tcpTransportFor(opts))(
      (m) => replica?.onMessage(m),
      (peer) => replica?.onPeerLost(peer),
    );
    replica = new Replica(opts, storage, transport, seams.unsafe ?? {});
    replica.port = await transport.start();
    replica.startTimer(seams.timer ?? timeoutTimer);
    return replica;
  }

  // ---- state for the broker ----------------------------------------------------------------

  get role(): Role {
    return this.core.currentRole;
  }
  get term(): number {
    return this.core.currentTerm;
  }
  get leaderId(): string | null {
    return this.core.leaderId;
  }
  get commitIndex(): number {
    return this.core.commitIndex;
  }
  get appliedIndex(): number {
    return this.core.appliedIndex;
  }
  get lastIndex(): number {
    return this.core.log.lastIndex();
  }
  isLeader(): boolean {
    return this.core.isLeader();
  }
  /** Leader only: the highest index known replicated on `peer` (undefined on a follower). */
  matchIndexOf(peer: string): number | undefined {
    return this.core.matchIndexOf(peer);
  }

  /** Why this member still takes no part in votes or commits ('damaged' / 'blank'), or null. */
  get recovering(): RecoveryReason | null {
    return this.core.recoveringReason;
  }
  /** What recovery of the store found damaged (and where it put the files), if anything. */
  get storeDamage(): StoreDamage | undefined {
    return this.storage.damage;
  }
  /** See RaftCore.isQuorate: false means "stop serving clients now". */
  isQuorate(): boolean {
    return this.core.isQuorate(this.clock());
  }
  /** Leader, quorate, with an entry of its own term committed: its applied state is current. */
  canServeReads(): boolean {
    return this.core.canServeReads(this.clock());
  }
  /** fsync/write counters of the store. */
  get storageStats(): { fsyncs: number; writes: number; bytes: number } {
    return this.storage.stats;
  }

  /** Durations of the log's fsyncs. */
  get fsyncLatency(): LatencyHistogram {
    return this.storage.fsyncLatency;
  }

  /**
   * Replicate `data`. Resolves once it is committed (durable on a majority) and applied here.
   * Throws NotLeaderError at once on a follower, RecordTooLargeError when `data` would not fit in
   * one log record (log-records.ts); rejects with ProposalOutcomeError when the
   * outcome becomes unknown (leadership lost) or the entry was overwritten (`lost: true`).
   */
  propose(data: Uint8Array): Promise<Committed> {
    let pos: { index: number; term: number };
    try {
      pos = this.append(data);
    } catch (err) {
      return Promise.reject(err);
    }
    return new Promise<Committed>((resolve, reject) => {
      this.waiters.set(pos.index, { term: pos.term, resolve, reject });
    });
  }

  /**
   * Replicate `data` with nobody waiting here for its commit: for a caller that learns the
   * entry's fate from its own apply and from role changes (the cluster backend), and so need not
   * pay a promise, a waiter and a map entry per entry. Throws as `propose` rejects at once.
   */
  append(data: Uint8Array): { index: number; term: number } {
    if (this.closed) throw new ReplicationError('amqp:connection:forced', 'replica closed');
    if (!this.core.isLeader()) throw new NotLeaderError(this.core.leaderId);
    assertEntryFits(data); // never a record the log's reader would call damaged
    const pos = this.core.propose(data, this.clock());
    this.kick();
    return pos;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.timer?.stop();
    await this.transport.close();
    await this.loopDone;
    await this.storage.close();
    this.failAll(false, 'replica closed');
  }
}

/** The production transport: TCP to every member, with the handshake (and TLS) of the options. */
function tcpTransportFor(opts: ReplicaOptions): TransportFactory {
  return (onMessage, onPeerLost) => {
    const listen = opts.listen ?? opts.members[opts.id];
    if (!listen) throw new ReplicationError('amqp:invalid-field', `no address for member ${opts.id}`);
    return new TcpTransport({
      id: opts.id,
      clusterId: opts.clusterId,
      listen,
      peers: opts.members,
      codec: opts.codec ?? amqpWireCodec,
      onMessage,
      onPeerLost,
      ...(opts.secret ? { secret: opts.secret } : {}),
      ...(opts.tls ? { tls: opts.tls } : {}),
      ...(opts.logger ? { logger: opts.logger } : {}),
    });
  };
}
