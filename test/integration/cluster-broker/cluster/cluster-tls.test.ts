/**
 * A real 3-member cluster with mutual TLS on the cluster port (`--cluster-tls-*`, certificates
 * made now with openssl) and a secret: it serves; a member process holding the right secret but a
 * certificate another CA signed is refused during TLS, and the cluster keeps serving.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterHandle } from '../../../../src/broker.js';
import { brokerEntryNodeArgs } from '../../../../src/cluster-broker/supervisor/index.js';
import { Collector, closeConn, open } from '../../../cluster-broker/cluster/amqp-helpers.js';
import {
  portOf,
  range,
  sendVia,
  startTestCluster,
  waitServing,
} from '../../../cluster-broker/cluster/cluster-support.js';
import { makeTestPki, type TestPki } from '../../../cluster-broker/cluster/transport-fixture.js';
import { freePort, waitFor } from '../../../support/net.js';

let pki: TestPki;
let handle: ClusterHandle;
const memberLogs: string[] = [];
let impostor: ChildProcess | undefined;

beforeAll(async () => {
  pki = makeTestPki();
  handle = await startTestCluster({
    clusterTls: pki.files,
    onMemberOutput: (id, _stream, line) => memberLogs.push(`[${id}] ${line}`),
  });
  await waitServing(handle);
});

afterAll(async () => {
  if (impostor?.exitCode === null) impostor.kill('SIGKILL');
  await handle?.stop();
  rmSync(pki.dir, { recursive: true, force: true });
});

describe('a cluster with mutual TLS between members', () => {
  it('serves: a message sent via one member is received via another', async () => {
    const bodies = range('tls', 50);
    await sendVia(handle, 'n1', 'q-tls', bodies);
    const o = await open(portOf(handle, 'n3'));
    try {
      const c = new Collector(o.conn, 'q-tls');
      await c.until(50);
      expect(c.bodies).toEqual(bodies);
    } finally {
      await closeConn(o.conn);
    }
  });

  it('refuses a member with the right secret but a certificate of another CA', async () => {
    const files = {
      cert: join(pki.dir, 'stranger.pem'),
      key: join(pki.dir, 'stranger.key'),
      ca: join(pki.dir, 'cluster-ca.pem'),
    };
    const n1 = handle.members().find((m) => m.id === 'n1')!;
    const own = await freePort();
    impostor = spawn(
      process.execPath,
      [
        ...brokerEntryNodeArgs(),
        'node',
        '--id',
        'n2',
        '--port',
        '0',
        '--peers',
        `n1=127.0.0.1:${n1.clusterPort},n2=127.0.0.1:${own}`,
        '--data-dir',
        mkdtempSync(join(pki.dir, 'impostor-')),
        '--cluster-secret-file',
        handle.clusterSecretFile,
        '--cluster-tls-cert',
        files.cert,
        '--cluster-tls-key',
        files.key,
        '--cluster-tls-ca',
        files.ca,
      ],
      { stdio: ['pipe', 'ignore', 'ignore'] },
    );
    const refusals = (): string[] =>
      memberLogs.filter(
        (l) => l.startsWith('[n1]') && l.includes('TLS handshake with a connecting peer failed'),
      );
    await waitFor(() => refusals().length >= 2, {
      timeoutMs: 60_000,
      what: 'n1 refusing the rogue certificate',
    });
    expect(refusals()[0]).toMatch(/"remote":"127\.0\.0\.1:\d+"/);
    await sendVia(handle, 'n2', 'q-tls-after', ['still-serving']);
    impostor.kill('SIGKILL');
    await waitServing(handle);
  });
});
