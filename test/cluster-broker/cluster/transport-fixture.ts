/**
 * Real TcpTransports on loopback for the cluster-port security tests: members with a recording
 * logger and message sink, raw sockets that wait for the member to close them, and test-time
 * certificates made with openssl.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ClusterTlsOptions } from '../../../src/cluster-broker/replication/cluster-tls.js';
import type { Message } from '../../../src/cluster-broker/replication/raft/types.js';
import { TcpTransport } from '../../../src/cluster-broker/replication/tcp-transport.js';
import type { WireCodec } from '../../../src/cluster-broker/replication/wire.js';
import { binaryWireCodec } from '../../../src/cluster-broker/replication/wire-binary.js';

export interface LogLine {
  level: 'debug' | 'info' | 'warn' | 'error';
  msg: string;
  fields: Record<string, unknown>;
}

export interface TestMember {
  id: string;
  transport: TcpTransport;
  got: Message[];
  /** Members whose connection to this one closed (`onPeerLost`), in order. */
  lost: string[];
  logs: LogLine[];
  /** Log lines at warn whose message contains `text`. */
  warned(text: string): LogLine[];
}

export async function startMemberTransport(options: {
  id: string;
  ports: Record<string, number>;
  secret?: Uint8Array;
  tls?: ClusterTlsOptions;
  codec?: WireCodec;
  /** Largest frame after the handshake (larger messages are cut into fragments). */
  maxFrame?: number;
  /** Where to dial a peer when not at its own port (a proxy in between). */
  dialPorts?: Record<string, number>;
}): Promise<TestMember> {
  const got: Message[] = [];
  const lost: string[] = [];
  const logs: LogLine[] = [];
  const rec =
    (level: LogLine['level']) =>
    (obj: unknown, msg?: string): void => {
      logs.push({ level, msg: msg ?? '', fields: (obj ?? {}) as Record<string, unknown> });
    };
  const peers = Object.fromEntries(
    Object.entries(options.ports).map(([id, port]) => [
      id,
      { host: '127.0.0.1', port: id === options.id ? port : (options.dialPorts?.[id] ?? port) },
    ]),
  );
  const transport = new TcpTransport({
    id: options.id,
    clusterId: 'test-cluster',
    listen: peers[options.id]!,
    peers,
    codec: options.codec ?? binaryWireCodec,
    onMessage: (m) => got.push(m),
    onPeerLost: (peer) => lost.push(peer),
    ...(options.secret ? { secret: options.secret } : {}),
    ...(options.tls ? { tls: options.tls } : {}),
    ...(options.maxFrame !== undefined ? { maxFrame: options.maxFrame } : {}),
    logger: { debug: rec('debug'), info: rec('info'), warn: rec('warn'), error: rec('error') },
  });
  await transport.start();
  return {
    id: options.id,
    transport,
    got,
    lost,
    logs,
    warned: (text) => logs.filter((l) => l.level === 'warn' && l.msg.includes(text)),
  };
}

export interface RawOutcome {
  /** The member closed the connection (we did not give up first). */
  closedByMember: boolean;
  elapsedMs: number;
  /** Bytes we managed to write before the close. */
  written: number;
  localPort: number;
}

/**
 * Connects to `port`, writes `head`, then (if `stream` > 0) streams that many more bytes in 1 MiB
 * chunks, and waits for the member to close the connection (gives up after `waitMs`).
 */
export function rawConnection(
  port: number,
  head: Uint8Array,
  opts: { stream?: number; waitMs?: number } = {},
): Promise<RawOutcome> {
  return new Promise((resolve) => {
    const started = Date.now();
    const s = net.connect({ host: '127.0.0.1', port });
    let gaveUp = false;
    let written = 0;
    let localPort = 0;
    const giveUp = setTimeout(() => {
      gaveUp = true;
      s.destroy();
    }, opts.waitMs ?? 10_000);
    const chunk = Buffer.alloc(1024 * 1024, 0x41);
    const pump = (): void => {
      while (written < (opts.stream ?? 0) && !s.destroyed) {
        written += chunk.length;
        if (!s.write(chunk)) {
          s.once('drain', pump);
          return;
        }
      }
    };
    s.on('connect', () => {
      localPort = s.localPort ?? 0;
      if (head.length > 0) s.write(head);
      pump();
    });
    s.on('data', () => {});
    s.on('error', () => {});
    s.on('close', () => {
      clearTimeout(giveUp);
      resolve({ closedByMember: !gaveUp, elapsedMs: Date.now() - started, written, localPort });
    });
  });
}

/** A u32 frame header declaring `length` bytes. */
export function header(length: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(length >>> 0, 0);
  return b;
}

export interface TestPki {
  /** A CA and a member certificate it signed. */
  good: ClusterTlsOptions;
  /** Another CA and a certificate it signed (valid, but not the cluster's). */
  rogue: ClusterTlsOptions;
  dir: string;
  files: { cert: string; key: string; ca: string };
}

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
}

function makeCa(dir: string, name: string): void {
  openssl(dir, [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '2',
    '-keyout',
    `${name}-ca.key`,
    '-out',
    `${name}-ca.pem`,
    '-subj',
    `/CN=${name} test CA`,
  ]);
}

function makeCert(dir: string, ca: string, name: string): void {
  openssl(dir, [
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.csr`,
    '-subj',
    `/CN=${name}`,
  ]);
  openssl(dir, [
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    `${ca}-ca.pem`,
    '-CAkey',
    `${ca}-ca.key`,
    '-CAcreateserial',
    '-days',
    '2',
    '-out',
    `${name}.pem`,
  ]);
}

/** Certificates generated now with openssl, in a fresh temp dir. */
export function makeTestPki(): TestPki {
  const dir = mkdtempSync(join(tmpdir(), 'quorate-pki-'));
  makeCa(dir, 'cluster');
  makeCa(dir, 'rogue');
  makeCert(dir, 'cluster', 'member');
  makeCert(dir, 'rogue', 'stranger');
  const read = (f: string): Buffer => readFileSync(join(dir, f));
  return {
    dir,
    good: { cert: read('member.pem'), key: read('member.key'), ca: read('cluster-ca.pem') },
    rogue: { cert: read('stranger.pem'), key: read('stranger.key'), ca: read('cluster-ca.pem') },
    files: { cert: join(dir, 'member.pem'), key: join(dir, 'member.key'), ca: join(dir, 'cluster-ca.pem') },
  };
}
