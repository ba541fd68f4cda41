/** Test certificates made with the system's openssl (installed by .ci/run). */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

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
