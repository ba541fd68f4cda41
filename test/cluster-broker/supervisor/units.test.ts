/**
 * Pure pieces of the supervisor: restart backoff, the ready-line parser, the cluster command's
 * flags, the cluster plan's ports, and the member command lines.
 */
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { parseClusterArgs } from '../../../src/cluster-broker/cli/cluster-args.js';
import { RestartBackoff } from '../../../src/cluster-broker/supervisor/backoff.js';
import { planCluster } from '../../../src/cluster-broker/supervisor/cluster-plan.js';
import {
  brokerEntryNodeArgs,
  defaultMemberCommand,
  memberNodeArgs,
} from '../../../src/cluster-broker/supervisor/default-member-command.js';
import { parseReadyLine } from '../../../src/cluster-broker/supervisor/member-process.js';
import { portsInUse, reserveFreePorts } from '../../../src/cluster-broker/supervisor/ports.js';
import { DEFAULT_RESTART_POLICY } from '../../../src/cluster-broker/supervisor/types.js';

describe('RestartBackoff', () => {
  it('doubles per consecutive crash up to the cap, and resets after enough uptime', () => {
    const backoff = new RestartBackoff({
      initialDelayMs: 100,
      factor: 2,
      maxDelayMs: 500,
      resetAfterMs: 1_000,
    });
    expect([0, 0, 0, 0, 0].map((up) => backoff.nextDelay(up))).toEqual([100, 200, 400, 500, 500]);
    expect(backoff.consecutiveCrashes).toBe(5);
    expect(backoff.nextDelay(999)).toBe(500);
    expect(backoff.nextDelay(1_000)).toBe(100);
    expect(backoff.nextDelay(10)).toBe(200);
  });

  it('has resource-manager-like defaults', () => {
    expect(DEFAULT_RESTART_POLICY).toEqual({
      initialDelayMs: 100,
      maxDelayMs: 5_000,
      factor: 2,
      resetAfterMs: 10_000,
      maxFailures: 5,
      failureWindowMs: 60_000,
    });
  });
});

describe('parseReadyLine', () => {
  it('accepts the member contract line', () => {
    expect(parseReadyLine('{"ready":true,"id":"n1","amqpPort":5672,"clusterPort":6672,"pid":1234}')).toEqual({
      ready: true,
      id: 'n1',
      amqpPort: 5672,
      clusterPort: 6672,
      pid: 1234,
    });
  });

  it.each([
    'listening on 5672',
    '{"ready":false,"id":"n1","amqpPort":1,"clusterPort":2,"pid":3}',
    '{"ready":true,"id":"n1","amqpPort":"5672","clusterPort":6672,"pid":1}',
    '{"ready":true,"amqpPort":5672,"clusterPort":6672,"pid":1}',
    '{"ready":true,',
    'null',
  ])('ignores %s', (line) => {
    expect(parseReadyLine(line)).toBeUndefined();
  });
});

describe('parseClusterArgs', () => {
  it('parses the documented flags and defaults', () => {
    const defaults = {
      httpBasePort: undefined,
      clusterSecretFile: undefined,
      clusterTls: undefined,
      dedup: false,
      maxFailures: undefined,
      failureWindowS: undefined,
      logLevel: undefined,
      help: false,
      memberArgs: [],
    };
    expect(parseClusterArgs(['--nodes', '5', '--base-port', '7000', '--data-dir', '/tmp/d'])).toEqual({
      ...defaults,
      nodes: 5,
      basePort: 7000,
      dataDir: '/tmp/d',
    });
    expect(parseClusterArgs([])).toEqual({ ...defaults, nodes: 3, basePort: 5672, dataDir: undefined });
    // --dedup takes no value: the flag after it is still parsed
    expect(parseClusterArgs(['--dedup', '--nodes', '5'])).toMatchObject({ dedup: true, nodes: 5 });
    // server flags go to every member as given; per-member ones are the cluster's
    expect(
      parseClusterArgs(['--users', 'u.txt', '--nodes', '3', '--no-anonymous', '--permissions', 'p.json'])
        .memberArgs,
    ).toEqual(['--users', 'u.txt', '--no-anonymous', '--permissions', 'p.json']);
    const http = ['--http-max-connections', '8', '--http-allowed-hosts', 'status.example,b.example'];
    expect(parseClusterArgs(['--nodes', '3', ...http]).memberArgs).toEqual(http);
    expect(() => parseClusterArgs(['--port', '1'])).toThrow(/set per member/);
    expect(parseClusterArgs(['--nodes=1', '--base-port=0']).basePort).toBe(0);
    expect(parseClusterArgs(['-h']).help).toBe(true);
    expect(parseClusterArgs(['--http-base-port', '15672']).httpBasePort).toBe(15672);
    expect(parseClusterArgs([]).httpBasePort).toBeUndefined();
    const tls = ['--cluster-tls-cert', 'c.pem', '--cluster-tls-key', 'k.pem', '--cluster-tls-ca', 'ca.pem'];
    expect(parseClusterArgs(['--cluster-secret-file', '/s', ...tls])).toMatchObject({
      clusterSecretFile: '/s',
      clusterTls: { cert: 'c.pem', key: 'k.pem', ca: 'ca.pem' },
    });
    expect(parseClusterArgs(['--log-level', 'debug']).logLevel).toBe('debug');
    expect(() => parseClusterArgs(['--log-level', 'loud'])).toThrow(/--log-level must be one of/);
  });

  it.each([
    [['--nodes', 'three'], /--nodes must be an integer/],
    [['--nodes', '0'], /--nodes must be an integer/],
    [['--base-port', '-1'], /base-port/],
    [['--base-port', '70000'], /--base-port must be an integer/],
    [['--http-base-port', 'x'], /--http-base-port must be an integer/],
    [['--bogus'], /Unknown option/],
    [['--cluster-tls-cert', 'c.pem'], /go together/],
    [['extra'], /Unexpected argument|positional/i],
  ])('rejects %j', (argv, message) => {
    expect(() => parseClusterArgs(argv)).toThrow(message);
    try {
      parseClusterArgs(argv);
    } catch (err) {
      expect((err as { condition: string }).condition).toBe('amqp:invalid-field');
    }
  });
});

describe('planCluster', () => {
  it('derives ports from the base port (5672 -> cluster 6672) and makes a store dir per member', async () => {
    const plan = await planCluster({ nodes: 3, basePort: 5672 });
    try {
      expect(plan.ids).toEqual(['n1', 'n2', 'n3']);
      expect(plan.amqpPorts).toEqual([5672, 5673, 5674]);
      expect(plan.clusterPorts).toEqual([6672, 6673, 6674]);
      expect(plan.createdDataDir).toBe(true);
      for (const id of plan.ids) expect(existsSync(`${plan.dataDir}/${id}`)).toBe(true);
    } finally {
      await rm(plan.dataDir, { recursive: true, force: true });
    }
  });

  it('picks distinct free ports when the base port is 0', async () => {
    const plan = await planCluster({ nodes: 5 });
    await plan.releasePorts();
    await rm(plan.dataDir, { recursive: true, force: true });
    const all = [...plan.amqpPorts, ...plan.clusterPorts];
    expect(new Set(all).size).toBe(10);
    expect(all.every((p) => p > 0)).toBe(true);
  });

  it('gives member i the HTTP port httpBasePort+i (free ports for 0, none when absent)', async () => {
    const fixed = await planCluster({ nodes: 3, basePort: 5672, httpBasePort: 15672 });
    await rm(fixed.dataDir, { recursive: true, force: true });
    expect(fixed.httpPorts).toEqual([15672, 15673, 15674]);
    const free = await planCluster({ nodes: 3, httpBasePort: 0 });
    await free.releasePorts();
    await rm(free.dataDir, { recursive: true, force: true });
    expect(new Set([...free.amqpPorts, ...free.clusterPorts, ...free.httpPorts!]).size).toBe(9);
    const none = await planCluster({ nodes: 3 });
    await none.releasePorts();
    await rm(none.dataDir, { recursive: true, force: true });
    expect(none.httpPorts).toBeUndefined();
  });

  it('rejects impossible plans', async () => {
    await expect(planCluster({ nodes: 0 })).rejects.toThrow(/positive integer/);
    await expect(planCluster({ nodes: 3, basePort: 65_000 })).rejects.toThrow(/no room/);
  });
});

describe('member command lines', () => {
  const launch = {
    id: 'n2',
    index: 1,
    amqpPort: 5673,
    clusterPort: 6673,
    peers: [],
    peersArg: 'n1=127.0.0.1:40001,n2=127.0.0.1:6673,n3=127.0.0.1:40002',
    dataDir: '/data/n2',
    clusterSecretFile: '/data/cluster-secret',
  };

  it('passes the issue #5 flags and the cluster secret to `quorate-broker node`', () => {
    expect(memberNodeArgs(launch)).toEqual([
      'node',
      '--id',
      'n2',
      '--port',
      '5673',
      '--cluster-port',
      '6673',
      '--peers',
      'n1=127.0.0.1:40001,n2=127.0.0.1:6673,n3=127.0.0.1:40002',
      '--data-dir',
      '/data/n2',
      '--cluster-secret-file',
      '/data/cluster-secret',
    ]);
    expect(memberNodeArgs({ ...launch, httpPort: 15673 }).slice(-2)).toEqual(['--http-port', '15673']);
  });

  it('passes the cluster TLS files when given', () => {
    const withSecurity = {
      ...launch,
      clusterTls: { cert: '/pki/m.pem', key: '/pki/m.key', ca: '/pki/ca.pem' },
    };
    expect(memberNodeArgs(withSecurity).slice(13)).toEqual([
      '--cluster-tls-cert',
      '/pki/m.pem',
      '--cluster-tls-key',
      '/pki/m.key',
      '--cluster-tls-ca',
      '/pki/ca.pem',
    ]);
  });

  it('runs the real entry with this Node: from source via tsx, or the built bin', () => {
    const hasSourceEntry = existsSync('src/cluster-broker/cli/main.ts');
    const hasBuiltBin = existsSync('dist/bin/quorate-broker.js');
    if (!hasSourceEntry && !hasBuiltBin) {
      expect(() => brokerEntryNodeArgs()).toThrow(/no quorate-broker entry/);
      return;
    }
    const command = defaultMemberCommand(launch);
    expect(command.command).toBe(process.execPath);
    const entry = hasSourceEntry ? 'src/cluster-broker/cli/main.ts' : 'dist/bin/quorate-broker.js';
    expect(command.args.some((a) => a.endsWith(entry))).toBe(true);
    expect(command.args.slice(-13)).toEqual(memberNodeArgs(launch));
  });
});

describe('reserveFreePorts', () => {
  it('holds its ports until release(), then they can be bound', async () => {
    const reservation = await reserveFreePorts(3);
    expect(new Set(reservation.ports).size).toBe(3);
    expect(await portsInUse(reservation.ports)).toEqual(reservation.ports);
    await reservation.release();
    expect(await portsInUse(reservation.ports)).toEqual([]);
  });
});
