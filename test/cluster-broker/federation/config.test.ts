/** `--federation FILE` validation (docs/federation.md#configuration): every mistake is named. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseClusterArgs } from '../../../src/cluster-broker/cli/cluster-args.js';
import { parseNodeArgs } from '../../../src/cluster-broker/cli/node-command.js';
import { parseSingleNodeArgs } from '../../../src/cluster-broker/cli/single-node-args.js';
import {
  checkFederationConfig,
  FederationConfigError,
  loadFederationFile,
} from '../../../src/cluster-broker/federation/index.js';

const URL = 'amqp://127.0.0.1:5672';
let dir = '';

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'quorate-federation-config-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function refusal(value: unknown): string {
  try {
    checkFederationConfig(value, 'f.json');
  } catch (err) {
    expect(err).toBeInstanceOf(FederationConfigError);
    return (err as Error).message;
  }
  throw new Error('accepted');
}

describe('federation config', () => {
  it('accepts the issue example, topics included, with per-upstream and top-level maxHops', () => {
    const c = checkFederationConfig({
      maxHops: 3,
      upstreams: [
        { name: 'eu', urls: [URL], username: 'u', passwordFile: 'p', queues: ['orders'], topics: ['prices'] },
      ],
    });
    expect(c).toEqual({
      maxHops: 3,
      upstreams: [
        { name: 'eu', urls: [URL], username: 'u', passwordFile: 'p', queues: ['orders'], topics: ['prices'] },
      ],
    });
  });

  it('refuses unknown keys, at the top and in an upstream', () => {
    expect(refusal({ upstreams: [], extra: 1 })).toMatch(/f\.json: unknown key 'extra'/);
    expect(refusal({ upstreams: [{ name: 'eu', urls: [URL], queue: ['x'] }] })).toMatch(
      /upstreams\[0\]: unknown key 'queue'/,
    );
  });

  it('refuses missing or bad urls', () => {
    expect(refusal({ upstreams: [{ name: 'eu', queues: ['q'] }] })).toMatch(
      /upstream 'eu': 'urls' must list/,
    );
    expect(refusal({ upstreams: [{ name: 'eu', urls: [] }] })).toMatch(/'urls' must list at least one/);
    expect(refusal({ upstreams: [{ name: 'eu', urls: ['http://x'] }] })).toMatch(/must be amqp:\/\//);
  });

  it('refuses a queue listed twice and an upstream named twice', () => {
    expect(refusal({ upstreams: [{ name: 'eu', urls: [URL], queues: ['q', 'q'] }] })).toMatch(
      /queue 'q' is listed twice/,
    );
    expect(
      refusal({
        upstreams: [
          { name: 'eu', urls: [URL] },
          { name: 'eu', urls: [URL] },
        ],
      }),
    ).toMatch(/upstream 'eu' is named twice/);
  });

  it('refuses a topic listed twice, or one name listed as both a queue and a topic', () => {
    expect(refusal({ upstreams: [{ name: 'eu', urls: [URL], topics: ['prices', 'prices'] }] })).toMatch(
      /upstream 'eu': topic 'prices' is listed twice/,
    );
    expect(refusal({ upstreams: [{ name: 'eu', urls: [URL], queues: ['x'], topics: ['x'] }] })).toMatch(
      /upstream 'eu': 'x' is listed as both a queue and a topic/,
    );
  });

  it('a topic fed by two upstreams is fine', () => {
    const c = checkFederationConfig({
      upstreams: [
        { name: 'eu', urls: [URL], topics: ['prices'] },
        { name: 'us', urls: [URL], topics: ['prices'] },
      ],
    });
    expect(c.upstreams.map((u) => u.topics)).toEqual([['prices'], ['prices']]);
  });

  it('refuses a bad maxHops and a passwordFile without a username', () => {
    expect(refusal({ maxHops: 0, upstreams: [] })).toMatch(/'maxHops' must be a positive integer/);
    expect(refusal({ upstreams: [{ name: 'eu', urls: [URL], passwordFile: 'p' }] })).toMatch(
      /'passwordFile' needs 'username'/,
    );
  });

  it('reads the password file relative to the config file; an unreadable one is named', async () => {
    await writeFile(join(dir, 'pw'), 'secret\n');
    const good = join(dir, 'good.json');
    await writeFile(
      good,
      JSON.stringify({
        upstreams: [{ name: 'eu', urls: [URL], username: 'u', passwordFile: 'pw', queues: ['q'] }],
      }),
    );
    expect(await loadFederationFile(good)).toEqual([
      {
        name: 'eu',
        urls: [URL],
        username: 'u',
        password: 'secret',
        queues: ['q'],
        topics: [],
        maxHops: 4,
        reconnectDelayMs: 2000,
      },
    ]);
    const bad = join(dir, 'bad.json');
    await writeFile(
      bad,
      JSON.stringify({ upstreams: [{ name: 'eu', urls: [URL], username: 'u', passwordFile: 'nope' }] }),
    );
    await expect(loadFederationFile(bad)).rejects.toThrow(/upstream 'eu': cannot read passwordFile .*nope/);
    const notJson = join(dir, 'broken.json');
    await writeFile(notJson, '{');
    await expect(loadFederationFile(notJson)).rejects.toThrow(FederationConfigError);
  });
});

describe('--federation and --cluster-id flags', () => {
  it('the single broker, node and cluster take them', () => {
    expect(parseSingleNodeArgs(['--cluster-id', 'eu', '--federation', 'f.json'])).toMatchObject({
      clusterId: 'eu',
      federationFile: 'f.json',
    });
    const node = parseNodeArgs([
      '--id',
      'n1',
      '--peers',
      'n1=127.0.0.1:6672',
      '--cluster-id',
      'eu',
      '--federation',
      'f.json',
    ]);
    expect(node.clusterId).toBe('eu');
    expect(parseSingleNodeArgs(node.rest).federationFile).toBe('f.json');
    expect(parseClusterArgs(['--cluster-id', 'eu', '--federation', 'f.json']).memberArgs).toEqual([
      '--cluster-id',
      'eu',
      '--federation',
      'f.json',
    ]);
  });
});
