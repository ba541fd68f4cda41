/**
 * The mutants `npm run mutants` (run.ts) applies, one at a time: each breaks one data-loss promise
 * by replacing an exact text that must occur once in its file (mutants.test.ts checks that it
 * still does, so a refactor that moves the text fails a test instead of the runner).
 */
export interface Mutant {
  /** Short name, for `--only`. */
  readonly name: string;
  /** The file changed, relative to the repository root. */
  readonly file: string;
  /** Exact text that must occur once in `file`. */
  readonly find: string;
  readonly replace: string;
  /** The promise the change breaks. */
  readonly promise: string;
  /** The test files that must fail with the change. */
  readonly tests: readonly string[];
}

const REPLICA_TESTS = [
  'test/cluster-broker/replication/file-storage-power-loss.test.ts',
  'test/cluster-broker/replication/member-power-loss.test.ts',
];

export const MUTANTS: readonly Mutant[] = [
  {
    name: 'store-no-datasync',
    file: 'src/cluster-broker/store/file-event-store.ts',
    find: 'await this.fsyncLatency.time(() => this.fh.datasync());',
    replace: 'await this.fsyncLatency.time(async () => {});',
    promise: "single-node store: an event's `durable` resolves only once it survives a power loss",
    tests: ['test/cluster-broker/store/store-power-loss.test.ts'],
  },
  {
    name: 'raft-log-no-datasync',
    file: 'src/cluster-broker/replication/file-storage.ts',
    find: 'await this.fsyncLatency.time(() => this.fh.datasync());',
    replace: 'await this.fsyncLatency.time(async () => {});',
    promise: "Raft storage: a Ready's log entries survive a power loss once `persist` resolves",
    tests: REPLICA_TESTS,
  },
  {
    name: 'raft-new-log-no-dir-sync',
    file: 'src/cluster-broker/replication/file-storage.ts',
    find: 'if (logFound === undefined) await fs.syncDir(dir);',
    replace: '',
    promise: 'Raft storage: a new log file keeps its name across a power loss before its entries count',
    tests: REPLICA_TESTS,
  },
  {
    name: 'atomic-replace-no-dir-sync',
    file: 'src/cluster-broker/files/durable-fs.ts',
    find: 'await fs.rename(tmp, file);\n  await fs.syncDir(dirname(file));',
    replace: 'await fs.rename(tmp, file);\n  void dirname;',
    promise: 'an atomically replaced file (vote record, snapshots) is the new one after a power loss',
    tests: [...REPLICA_TESTS, 'test/cluster-broker/store/store-power-loss.test.ts'],
  },
  {
    name: 'replica-send-before-persist',
    file: 'src/cluster-broker/replication/replica-ready.ts',
    // the answers go out as soon as the Ready is taken, before its write is durable
    find: 'if (this.unsafe.sendBeforePersist === true) for (const m of messages) this.send(m);\n    const persistStart = this.clock();\n    await this.storage.persist(r.persist);\n    if (this.closed) return;\n    this.notePersistTime(this.clock() - persistStart, r);\n    if (this.unsafe.sendBeforePersist !== true) for (const m of messages) this.send(m);',
    replace:
      'for (const m of messages) this.send(m);\n    const persistStart = this.clock();\n    await this.storage.persist(r.persist);\n    if (this.closed) return;\n    this.notePersistTime(this.clock() - persistStart, r);',
    promise: 'a member answers (acks an append, grants a vote) only once what it answers for is durable',
    tests: [
      'test/cluster-broker/replication/cluster-power-loss.test.ts',
      'test/cluster-broker/replication/sim.test.ts',
    ],
  },
  {
    name: 'settle-before-durable',
    file: 'src/cluster-broker/server/local-backend.ts',
    find: '    return durable.then(\n      () => result,',
    replace: '    void durable.catch(() => {});\n    return Promise.resolve().then(\n      () => result,',
    promise: "single node: a publisher's transfer is settled `accepted` only once the enqueue is durable",
    tests: ['test/cluster-broker/server/local-backend.test.ts'],
  },
  {
    name: 'broker-dedup-off',
    file: 'src/cluster-broker/core/enqueue.ts',
    find: "if (e.dedupKey !== undefined && !q.dedup.admit(e.dedupKey, s.now))\n    return { type: 'enqueue', status: 'duplicate' };",
    replace: '',
    promise: 'a re-sent transfer whose settlement was lost is enqueued once (broker dedup by message-id)',
    tests: ['test/integration/cluster-broker/server/lost-settlement.test.ts'],
  },
  {
    name: 'commit-old-term-by-count',
    file: 'src/cluster-broker/replication/raft/leader-side.ts',
    find: 'if (this.unsafe.commitOldTermsByCount !== true && this.log.term(n) !== this.term) return false;',
    replace: '',
    promise: 'a leader commits only entries of its own term by counting (Raft figure 8)',
    tests: ['test/cluster-broker/replication/core.test.ts', 'test/cluster-broker/replication/sim.test.ts'],
  },
  {
    name: 'leader-counts-own-unsynced',
    file: 'src/cluster-broker/replication/raft/leader-side.ts',
    find: 'const matches = [this.log.durable];',
    replace: 'const matches = [this.log.lastIndex()];',
    promise: 'the leader counts its own log toward a commit only once it is durable',
    tests: ['test/cluster-broker/replication/core.test.ts'],
  },
  {
    name: 'skip-origin-check',
    file: 'src/cluster-broker/cluster/cluster-backend.ts',
    find: '    if (origin !== this.origin && this.unsafe.skipOriginCheck !== true) return;\n    const p = this.pending.get(seq);',
    replace: '    const p = this.pending.get(seq);',
    promise:
      "a member settles a publisher's transfer only on the outcome of its own entry, not another member's with the same number",
    tests: [
      'test/cluster-broker/cluster/backend-origin.test.ts',
      'test/cluster-broker/cluster/sim-broker.test.ts',
    ],
  },
];
