/**
 * `quorate-broker node` refuses, before starting anything (exit 2, a message saying what to do),
 * a cluster without a secret (on loopback too, unless --insecure-no-secret, which warns), a
 * cluster address reachable from other hosts without a secret, and a secret it cannot trust.
 */
import { EventEmitter } from 'node:events';
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runNodeCommand } from '../../../src/cluster-broker/cli/node-command.js';
import {
  ensureClusterSecret,
  isLoopbackHost,
} from '../../../src/cluster-broker/replication/cluster-secret.js';
import { allocateFreePorts } from '../../../src/cluster-broker/supervisor/ports.js';

const dir = mkdtempSync(join(tmpdir(), 'quorate-node-security-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * Runs `node` in this process. A member that starts is stopped as soon as it prints its ready
 * line (SIGTERM through the injected signals), so a start that should have been refused ends with
 * exit 0 instead of hanging.
 */
async function run(argv: string[]): Promise<{ code: number; stderr: string; stdout: string }> {
  let stderr = '';
  let stdout = '';
  const signals = new EventEmitter();
  const code = await runNodeCommand(argv, {
    stdout: {
      write: (c: string) => {
        stdout += c;
        if (stdout.includes('"ready":true')) setImmediate(() => signals.emit('SIGTERM'));
      },
    },
    stderr: { write: (c: string) => (stderr += c) },
    signals,
  });
  return { code, stderr, stdout };
}

const base = ['--id', 'n1', '--port', '0', '--data-dir', join(dir, 'data')];

describe('node start-up checks of the cluster port', () => {
  it('refuses a non-loopback peer address without --cluster-secret-file', async () => {
    const r = await run([...base, '--peers', 'n1=127.0.0.1:1,n2=10.20.30.40:6673,n3=127.0.0.1:3']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /refusing to start without --cluster-secret-file: the cluster address 10\.20\.30\.40/,
    );
    expect(r.stdout).toBe('');
  });

  it('refuses loopback peers without a secret: any local process could join', async () => {
    const [p1, p2] = await allocateFreePorts(2);
    const r = await run([...base, '--peers', `n1=127.0.0.1:${p1},n2=127.0.0.1:${p2}`]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /refusing to start without --cluster-secret-file: any local user or process that reaches the cluster port could join the cluster/,
    );
    expect(r.stderr).toMatch(/--insecure-no-secret/);
    expect(r.stdout).toBe('');
  });

  it('starts on loopback with --insecure-no-secret, with a warning', async () => {
    const [p1, p2] = await allocateFreePorts(2);
    const data = mkdtempSync(join(dir, 'insecure-'));
    const argv = ['--id', 'n1', '--port', '0', '--data-dir', data, '--insecure-no-secret'];
    const r = await run([...argv, '--peers', `n1=127.0.0.1:${p1},n2=127.0.0.1:${p2}`]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/"ready":true/);
    expect(r.stderr).toMatch(/WARN running WITHOUT a cluster secret \(--insecure-no-secret\)/);
  });

  it('refuses --insecure-no-secret with a non-loopback cluster address', async () => {
    const r = await run([...base, '--insecure-no-secret', '--peers', 'n1=127.0.0.1:1,n2=10.20.30.40:6673']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/the cluster address 10\.20\.30\.40 is not a loopback address/);
  });

  it('refuses a non-loopback --cluster-host without a secret', async () => {
    const r = await run([...base, '--cluster-host', '0.0.0.0', '--peers', 'n1=127.0.0.1:1,n2=127.0.0.1:2']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/the cluster address 0\.0\.0\.0 is not a loopback address/);
  });

  it('refuses a secret file other users can read, and a short secret', async () => {
    const open = join(dir, 'open-secret');
    writeFileSync(open, 'a'.repeat(64));
    chmodSync(open, 0o644);
    const peers = ['--peers', 'n1=10.0.0.1:1,n2=10.0.0.2:2'];
    const r1 = await run([...base, ...peers, '--cluster-secret-file', open]);
    expect(r1.code).toBe(2);
    expect(r1.stderr).toMatch(/accessible by other users \(mode 644\): chmod 600/);
    const short = join(dir, 'short-secret');
    writeFileSync(short, 'tiny\n', { mode: 0o600 });
    const r2 = await run([...base, ...peers, '--cluster-secret-file', short]);
    expect(r2.code).toBe(2);
    expect(r2.stderr).toMatch(/shorter than 16 bytes/);
  });

  it('wants all three --cluster-tls-* files or none', async () => {
    const r = await run([...base, '--peers', 'n1=127.0.0.1:1', '--cluster-tls-cert', 'x.pem']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--cluster-tls-cert, --cluster-tls-key and --cluster-tls-ca go together/);
  });

  it('knows loopback addresses', () => {
    for (const h of ['127.0.0.1', '127.1.2.3', '::1', '[::1]', 'localhost', '::ffff:127.0.0.1'])
      expect(isLoopbackHost(h)).toBe(true);
    for (const h of ['0.0.0.0', '::', '10.0.0.1', '128.0.0.1', 'example.com', '::ffff:10.0.0.1'])
      expect(isLoopbackHost(h)).toBe(false);
  });

  it('creates a random secret readable by its owner only, and keeps an existing one', async () => {
    const d = mkdtempSync(join(dir, 'gen-'));
    const file = await ensureClusterSecret(d);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const again = await ensureClusterSecret(d);
    expect(again).toBe(file);
    expect(readFileSync(file, 'utf8')).toMatch(/^[0-9a-f]{64}\n$/);
  });
});
