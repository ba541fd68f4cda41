/**
 * Mutual TLS on the cluster port: every member presents a certificate and verifies the other's
 * against the cluster CA. Host names are not checked: members are often dialled by address or
 * through proxies, and the CA is the cluster's own (any certificate it signed is a member's);
 * member ids are bound by the handshake over the secret.
 */
import { readFile } from 'node:fs/promises';
import type { ConnectionOptions, TlsOptions } from 'node:tls';
import { ReplicationError } from './errors.js';

/** PEM contents of this member's certificate and key, and of the CA that signs members'. */
export interface ClusterTlsOptions {
  /** This member's certificate (PEM), signed by `ca`. */
  readonly cert: string | Buffer;
  /** Its private key (PEM). */
  readonly key: string | Buffer;
  /** The CA that signs every member's certificate (PEM); peers are verified against it. */
  readonly ca: string | Buffer;
}

/** Reads the three PEM files (`--cluster-tls-cert`, `--cluster-tls-key`, `--cluster-tls-ca`). */
export async function loadClusterTls(files: {
  cert: string;
  key: string;
  ca: string;
}): Promise<ClusterTlsOptions> {
  const read = async (what: string, file: string): Promise<Buffer> => {
    try {
      return await readFile(file);
    } catch (err) {
      throw new ReplicationError(
        'amqp:invalid-field',
        `cannot read the cluster TLS ${what} ${file}: ${(err as Error).message}`,
      );
    }
  };
  return {
    cert: await read('certificate', files.cert),
    key: await read('key', files.key),
    ca: await read('CA', files.ca),
  };
}

export function clusterTlsServerOptions(t: ClusterTlsOptions, handshakeTimeoutMs: number): TlsOptions {
  return {
    cert: t.cert,
    key: t.key,
    ca: t.ca,
    requestCert: true,
    rejectUnauthorized: true,
    handshakeTimeout: handshakeTimeoutMs,
    minVersion: 'TLSv1.2',
  };
}

export function clusterTlsClientOptions(t: ClusterTlsOptions): ConnectionOptions {
  return {
    cert: t.cert,
    key: t.key,
    ca: t.ca,
    rejectUnauthorized: true,
    checkServerIdentity: () => undefined,
    minVersion: 'TLSv1.2',
  };
}
