/**
 * A stand-alone replication member for process tests and benchmarks:
 *
 *   node --import tsx test/cluster-broker/replication/demo-member.ts --id n1 \
 *     --peers n1=127.0.0.1:6672,n2=127.0.0.1:6673,n3=127.0.0.1:6674 --dir /tmp/n1 [--cluster-id demo]
 *     [--group-commit 0|1] [--snapshot-every N] [--election-min 150 --election-max 300 --heartbeat 50]
 *
 * State machine: the list of applied payloads (UTF-8). Control channel: one JSON object per line on
 * stdin, one answer per line on stdout (matched by `id`):
 *   {"op":"propose","id":1,"data":"x"}   -> {"id":1,"ok":true,"index":5,"term":2} | {"id":1,"ok":false,...}
 *   {"op":"status","id":2}               -> {"id":2,"ok":true,"role":"leader","term":2,...}
 *   {"op":"dump","id":3}                 -> {"id":3,"ok":true,"values":["x",...]}
 * Events: {"event":"ready","id":"n1","port":6672,"pid":123} once listening; {"event":"role",...}.
 */
import { createInterface } from 'node:readline';
import { NotLeaderError } from '../../../src/cluster-broker/replication/errors.js';
import {
  type Entry,
  type Snapshot,
  snapshotBytes,
} from '../../../src/cluster-broker/replication/raft/types.js';
import { Replica } from '../../../src/cluster-broker/replication/replica.js';
import { parsePeers } from '../../../src/cluster-broker/replication/tcp-transport.js';
import { AmqpError } from '../../../src/errors.js';

function arg(name: string, fallback?: string): string {
  const i = process.argv.indexOf(`--${name}`);
  const v = i >= 0 ? process.argv[i + 1] : fallback;
  if (v === undefined) throw new Error(`missing --${name}`);
  return v;
}

function out(obj: unknown): void {
  process.stdout.write(`${JSON.stringify(obj)}\n`);
}

const values: string[] = [];
/** Snapshots restored since start (from disk at start-up or installed by the leader). */
let restores = 0;
const dec = new TextDecoder();
const enc = new TextEncoder();
const stateMachine = {
  apply(e: Entry): void {
    if (e.data !== null) values.push(dec.decode(e.data));
  },
  restore(s: Snapshot): void {
    restores++;
    values.length = 0;
    values.push(...(JSON.parse(dec.decode(snapshotBytes(s.data))) as string[]));
  },
  snapshot(): Uint8Array {
    return enc.encode(JSON.stringify(values));
  },
};

const replica = await Replica.start({
  id: arg('id'),
  clusterId: arg('cluster-id', 'demo'),
  members: parsePeers(arg('peers')),
  dataDir: arg('dir'),
  stateMachine,
  groupCommit: arg('group-commit', '1') !== '0',
  snapshotEvery: Number(arg('snapshot-every', '10000')),
  raft: {
    electionTimeoutMin: Number(arg('election-min', '150')),
    electionTimeoutMax: Number(arg('election-max', '300')),
    heartbeatInterval: Number(arg('heartbeat', '50')),
  },
});
replica.on('role', (s) => out({ event: 'role', ...s }));
replica.on('error', (err) => {
  out({ event: 'error', message: err.message });
  process.exit(2);
});

interface Command {
  op: string;
  id?: unknown;
  data?: string;
}

const rl = createInterface({ input: process.stdin });
rl.on('line', (line) => {
  let cmd: Command;
  try {
    cmd = JSON.parse(line) as Command;
  } catch {
    out({ ok: false, error: 'bad json' });
    return;
  }
  const id = cmd.id;
  switch (cmd.op) {
    case 'propose':
      replica.propose(enc.encode(cmd.data ?? '')).then(
        (c) => out({ id, ok: true, index: c.index, term: c.term }),
        (err: unknown) =>
          out({
            id,
            ok: false,
            error: err instanceof AmqpError ? err.condition : String(err),
            message: err instanceof Error ? err.message : String(err),
            ...(err instanceof NotLeaderError ? { leaderId: err.leaderId } : {}),
          }),
      );
      break;
    case 'status':
      out({
        id,
        ok: true,
        role: replica.role,
        term: replica.term,
        leaderId: replica.leaderId,
        commit: replica.commitIndex,
        applied: replica.appliedIndex,
        last: replica.lastIndex,
        quorate: replica.isQuorate(),
        recovering: replica.recovering,
        count: values.length,
        restores,
      });
      break;
    case 'dump':
      out({ id, ok: true, values });
      break;
    default:
      out({ id, ok: false, error: `unknown op ${cmd.op}` });
  }
});
rl.on('close', () => {
  void replica.close().then(() => process.exit(0));
});
out({ event: 'ready', id: replica.id, port: replica.port, pid: process.pid });
