/** Test certificates made with the system's openssl (installed by .ci/run). */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';

/**
 * A self-signed certificate for localhost and 127.0.0.1, valid one day, written to `dir` as
 * key.pem and cert.pem; returns their paths.
 */
export function selfSignedCert(dir: string): { key: string; cert: string } {
  const key = join(dir, 'key.pem');
  const cert = join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
    ],
    { stdio: 'ignore' },
  );
  return { key, cert };
}

/**
 * The PEM text of a self-signed localhost certificate for the tests of one file: made before
 * they run, its directory (under the OS temp dir) removed after. Read `key` / `cert` in a test.
 */
export function useSelfSignedCert(): { key: string; cert: string } {
  const pem = { key: '', cert: '' };
  let dir = '';
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'quorate-tls-'));
    const files = selfSignedCert(dir);
    pem.key = readFileSync(files.key, 'utf8');
    pem.cert = readFileSync(files.cert, 'utf8');
  });
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  return pem;
}
