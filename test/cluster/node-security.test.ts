/**
 * `quorate-broker node` refuses, before starting anything (exit 2, a message saying what to do),
 * a cluster address reachable from other hosts without a secret, and a secret it cannot trust.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runNodeCommand } from '../../src/cluster-broker/cluster/node-command.js';
import { ensureClusterSecret, isLoopbackHost } from '../../src/cluster-broker/replication/cluster-secret.js';

const dir = mkdtempSync(join(tmpdir(), 'quorate-node-security-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function run(argv: string[]): Promise<{ code: number; stderr: string; stdout: string }> {
  let stderr = '';
  let stdout = '';
  const code = await runNodeCommand(argv, {
    stdout: { write: (c: string) => (stdout += c) },
    stderr: { write: (c: string) => (stderr += c) },
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
