/** The CLI's argument handling and lifecycle in process (the real process is in broker-durability). */
import { EventEmitter } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../../src/cluster-broker/cli/run-cli.js';
import { parseSingleNodeArgs } from '../../../src/cluster-broker/cli/single-node-args.js';
import { brokerOptionsFromArgs } from '../../../src/cluster-broker/cli/single-node-command.js';
import { hashPassword } from '../../../src/cluster-broker/server/password-hash.js';
import { parseUsers, withUserLine } from '../../../src/cluster-broker/server/users.js';
import { waitFor } from '../../support/net.js';
import { closeConnection, connect } from '../server/rhea-client.js';

function sink() {
  const lines: string[] = [];
  return { lines, write: (s: string) => lines.push(s) };
}

describe('quorate-broker flags', () => {
  it('parses every flag', () => {
    const a = parseSingleNodeArgs([
      '--port',
      '0',
      '--host',
      '0.0.0.0',
      '--data-dir',
      '/d',
      '--users',
      'u.txt',
      '--no-anonymous',
      '--tls-cert',
      'c.pem',
      '--tls-key',
      'k.pem',
      '--max-connections',
      '5',
      '--max-frame-size',
      '4096',
      '--max-message-size',
      '1000',
      '--idle-timeout',
      '0',
      '--no-auto-create',
      '--max-queue-messages',
      '7',
      '--max-queue-bytes',
      '9',
      '--dedup-window-count',
      '0',
      '--dedup-window-ms',
      '5',
      '--container-id',
      'b1',
    ]);
    expect(a).toMatchObject({
      port: 0,
      host: '0.0.0.0',
      dataDir: '/d',
      usersFile: 'u.txt',
      anonymous: false,
      tlsCert: 'c.pem',
      tlsKey: 'k.pem',
      maxConnections: 5,
      maxFrameSize: 4096,
      maxMessageSize: 1000,
      idleTimeoutMs: 0,
      autoCreateQueues: false,
      maxQueueMessages: 7,
      maxQueueBytes: 9,
      dedupWindowCount: 0,
      dedupWindowMs: 5,
      containerId: 'b1',
    });
    expect(parseSingleNodeArgs([])).toMatchObject({
      port: 5672,
      host: '127.0.0.1',
      anonymous: true,
      autoCreateQueues: true,
      httpPort: undefined,
    });
    expect(parseSingleNodeArgs(['--http-port', '15672', '--http-host', '0.0.0.0'])).toMatchObject({
      httpPort: 15672,
      httpHost: '0.0.0.0',
    });
  });

  it('the HTTP cap and allowed names become startBroker options (also those `node` starts its member with)', async () => {
    const a = parseSingleNodeArgs([
      '--http-max-connections',
      '8',
      '--http-allowed-hosts',
      'Status.Example,b.example',
    ]);
    expect(await brokerOptionsFromArgs(a)).toMatchObject({
      httpLimits: { maxConnections: 8 },
      httpAllowedHosts: ['status.example', 'b.example'],
    });
    expect(() => parseSingleNodeArgs(['--http-max-connections', '0'])).toThrow(/--http-max-connections/);
  });

  it('parses the access and limit flags (byte sizes, percentages, the TLS-for-PLAIN switch)', () => {
    const a = parseSingleNodeArgs([
      '--permissions',
      'p.json',
      '--require-tls-for-plain',
      '--max-connections-per-address',
      '3',
      '--max-sessions-per-connection',
      '8',
      '--max-links-per-connection',
      '9',
      '--max-queues-per-connection',
      '10',
      '--max-memory',
      '512M',
      '--min-disk-free',
      '2G',
      '--max-queue-bytes',
      '0',
    ]);
    expect(a).toMatchObject({
      permissionsFile: 'p.json',
      requireTlsForPlain: true,
      maxConnectionsPerAddress: 3,
      maxSessionsPerConnection: 8,
      maxLinksPerConnection: 9,
      maxQueuesPerConnection: 10,
      maxMemory: 512 * 1024 * 1024,
      minDiskFree: 2 * 1024 ** 3,
      maxQueueBytes: 0,
    });
    expect(parseSingleNodeArgs(['--max-memory', '25%']).maxMemory).toEqual({ fraction: 0.25 });
    expect(parseSingleNodeArgs(['--no-require-tls-for-plain']).requireTlsForPlain).toBe(false);
    expect(parseSingleNodeArgs([]).requireTlsForPlain).toBeUndefined();
    expect(() => parseSingleNodeArgs(['--max-memory', 'lots'])).toThrow(/--max-memory/);
  });

  it('refuses bad flags with exit code 2', async () => {
    for (const argv of [
      ['--port', 'x'],
      ['--bogus'],
      ['--tls-cert', 'c.pem'],
      ['--max-frame-size', '100'],
      ['--http-port', '70000'],
      ['--log-level', 'loud'],
      ['node', '--id', 'n1', '--peers', 'n1=127.0.0.1:1,n2=127.0.0.1:2', '--data-dir', '/d', '--repair'],
      [
        'node',
        '--id',
        'n1',
        '--peers',
        'n1=127.0.0.1:1',
        '--data-dir',
        '/d',
        '--snapshot-every',
        '9007199254740993',
      ],
      ['nosuch'],
    ]) {
      const err = sink();
      expect(await runCli(argv, { stdout: sink(), stderr: err })).toBe(2);
      expect(err.lines.join('')).not.toBe('');
    }
  });

  it('--help prints the usage', async () => {
    const out = sink();
    expect(await runCli(['--help'], { stdout: out, stderr: sink() })).toBe(0);
    expect(out.lines.join('')).toContain('--data-dir');
    expect(out.lines.join('')).toContain('--http-port');
    for (const flag of ['--permissions', '--require-tls-for-plain', '--max-memory', '--min-disk-free'])
      expect(out.lines.join('')).toContain(flag);
  });

  it('prints one ready line, serves, and stops on SIGTERM with exit code 0', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'qb-cli-'));
    const out = sink();
    const signals = new EventEmitter();
    const done = runCli(['--port', '0', '--data-dir', dir], { stdout: out, stderr: sink(), signals });
    await waitFor(() => out.lines.length > 0, { timeoutMs: 30_000, what: 'the ready line', intervalMs: 10 });
    const ready = JSON.parse(out.lines[0]!) as { ready: boolean; amqpPort: number; pid: number };
    expect(ready).toEqual({ ready: true, amqpPort: ready.amqpPort, pid: process.pid });
    const c = await connect({ port: ready.amqpPort });
    await closeConnection(c);
    signals.emit('SIGTERM');
    expect(await done).toBe(0);
    expect(out.lines).toHaveLength(1);
    await rm(dir, { recursive: true, force: true });
  });
});

describe('logging', () => {
  async function warningsOf(extra: string[]): Promise<string> {
    const out = sink();
    const err = sink();
    const signals = new EventEmitter();
    const done = runCli(['--port', '0', ...extra], { stdout: out, stderr: err, signals });
    await waitFor(() => out.lines.length > 0, { timeoutMs: 30_000, what: 'the ready line', intervalMs: 10 });
    signals.emit('SIGTERM');
    expect(await done).toBe(0);
    return err.lines.join('');
  }

  it('warnings go to stderr by default; --log-level error hides them', async () => {
    expect(await warningsOf([])).toMatch(/^\S+Z WARN no --data-dir: messages are kept in memory only\n/m);
    expect(await warningsOf(['--log-level', 'error'])).toBe('');
  });
});

describe('users file', () => {
  it('one user:HASH per line, # comments; plaintext and malformed lines refused with the fix', async () => {
    const h = await hashPassword('pa:ss');
    const u = parseUsers(`# c\n\n alice:${h} \nbob:${h}\n`);
    expect([...u.keys()]).toEqual(['alice', 'bob']);
    expect(u.get('alice')!.params).toEqual({ ln: 14, r: 8, p: 1 });
    expect(() => parseUsers('nocolon\n')).toThrow(/line 1/);
    expect(() => parseUsers(`:${h}\n`)).toThrow(/line 1/);
    expect(() => parseUsers('# ok\nalice:s3cret\n', 'users.txt')).toThrow(
      /users\.txt line 2: the password of 'alice' is not a \$scrypt\$ hash.*quorate-broker passwd users\.txt alice/,
    );
    expect(() => parseUsers('alice:$scrypt$ln=99,r=8,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA\n')).toThrow(
      /malformed hash for 'alice'.*ln=99/,
    );
  });

  it('withUserLine replaces the user in place, keeps comments and others, appends a new user', () => {
    const text = '# users\nalice:$scrypt$old\nbob:$scrypt$b\nalice:$scrypt$dup\n';
    expect(withUserLine(text, 'alice', '$scrypt$new')).toBe('# users\nalice:$scrypt$new\nbob:$scrypt$b\n');
    expect(withUserLine(text, 'carol', '$scrypt$c')).toBe(`${text}carol:$scrypt$c\n`);
    expect(withUserLine('', 'dave', '$scrypt$d')).toBe('dave:$scrypt$d\n');
  });
});
