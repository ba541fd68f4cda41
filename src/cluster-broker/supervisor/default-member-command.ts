import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { findPackageRoot, thisModulePath } from '../files/package-root.js';
import type { PeerAddress } from '../netproxy/index.js';
import { SupervisorError } from './errors.js';
import type { MemberCommand } from './types.js';

/** Everything needed to start one member of a local cluster. */
export interface ClusterMemberLaunch {
  id: string;
  /** Position in the cluster, 0-based. */
  index: number;
  amqpPort: number;
  clusterPort: number;
  /** Its monitoring port (`--http-port`); absent: no HTTP. */
  httpPort?: number;
  /** Its AMQP-over-WebSocket port (`--ws-port`); absent: none. */
  wsPort?: number;
  /** The member's peer list (itself at its real cluster port, others via their proxies). */
  peers: PeerAddress[];
  /** `peers` as the `--peers` flag value: `n1=127.0.0.1:6672,n2=127.0.0.1:40123,...`. */
  peersArg: string;
  /** The member's own store directory (`<cluster data dir>/<id>`), created before it starts. */
  dataDir: string;
  /**
   * The cluster secret file every member is given (`--cluster-secret-file`): always one, as a
   * member refuses to start without it (docs/security.md#cluster-secret).
   */
  clusterSecretFile: string;
  /** PEM files for mutual TLS on the cluster port (`--cluster-tls-cert/-key/-ca`). */
  clusterTls?: ClusterTlsFiles;
  /** `--log-level` for the member (default: the member's own default, warn). */
  logLevel?: string;
  /** More `quorate-broker node` server flags (`--dedup`, `--users FILE`, `--permissions FILE`, limits...), appended as given. */
  extraArgs?: readonly string[];
}

/** Paths of the PEM files for mutual TLS between members. */
export interface ClusterTlsFiles {
  /** PEM certificate every member presents (`--cluster-tls-cert`). */
  cert: string;
  /** Its PEM private key (`--cluster-tls-key`). */
  key: string;
  /** PEM CA that signed it; members verify each other against it (`--cluster-tls-ca`). */
  ca: string;
}

/** The `quorate-broker node ...` arguments (after the entry script) for one member. */
export function memberNodeArgs(member: ClusterMemberLaunch): string[] {
  return [
    'node',
    '--id',
    member.id,
    '--port',
    String(member.amqpPort),
    '--cluster-port',
    String(member.clusterPort),
    '--peers',
    member.peersArg,
    '--data-dir',
    member.dataDir,
    '--cluster-secret-file',
    member.clusterSecretFile,
    ...(member.httpPort === undefined ? [] : ['--http-port', String(member.httpPort)]),
    ...(member.wsPort === undefined ? [] : ['--ws-port', String(member.wsPort)]),
    ...(member.clusterTls
      ? [
          '--cluster-tls-cert',
          member.clusterTls.cert,
          '--cluster-tls-key',
          member.clusterTls.key,
          '--cluster-tls-ca',
          member.clusterTls.ca,
        ]
      : []),
    ...(member.logLevel === undefined ? [] : ['--log-level', member.logLevel]),
    ...(member.extraArgs ?? []),
  ];
}

/**
 * The Node arguments that run the `quorate-broker` bin (before its subcommand): the built
 * `dist/bin/quorate-broker.js` when this code runs from `dist/`, else the TypeScript entry
 * `src/cluster-broker/cli/main.ts` through tsx (running from source: tests, `tsx`).
 * THE LEAD: if the entry moves, change the two paths here.
 */
export function brokerEntryNodeArgs(): string[] {
  const here = thisModulePath();
  const root = here === undefined ? undefined : findPackageRoot(here);
  if (root === undefined || here === undefined) {
    throw new SupervisorError('amqp:internal-error', 'cannot locate the quorate package to start members');
  }
  const builtBin = join(root, 'dist', 'bin', 'quorate-broker.js');
  const sourceEntry = join(root, 'src', 'cluster-broker', 'cli', 'main.ts');
  const runningFromDist = here.startsWith(join(root, 'dist') + sep);
  if ((runningFromDist || !existsSync(sourceEntry)) && existsSync(builtBin)) return [builtBin];
  if (existsSync(sourceEntry)) {
    const tsxLoader = createRequire(join(root, 'package.json')).resolve('tsx');
    return ['--import', pathToFileURL(tsxLoader).href, sourceEntry];
  }
  throw new SupervisorError(
    'amqp:internal-error',
    `no quorate-broker entry at ${builtBin} or ${sourceEntry}`,
  );
}

/**
 * The default command for a member of `startCluster`: this Node binary running the real
 * `quorate-broker node --id ... --port ... --cluster-port ... --peers ... --data-dir ...
 * --cluster-secret-file ...`.
 */
export function defaultMemberCommand(member: ClusterMemberLaunch): MemberCommand {
  return { command: process.execPath, args: [...brokerEntryNodeArgs(), ...memberNodeArgs(member)] };
}
