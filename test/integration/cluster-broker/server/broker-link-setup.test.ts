/**
 * Spec-exact link setup (spec 2.6.3, 3.5.3) against clients nobody here wrote: Qpid Proton Python
 * and rhea see both termini in the broker's answering attach, a distribution-mode copy receiver
 * browses without taking anything, and quorate:dedup in a target's capabilities is honoured.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrokerHandle, startBroker } from '../../../../src/broker.js';
import { connect, type RheaConnection } from '../../../cluster-broker/server/rhea-client.js';

const run = promisify(execFile);
let broker: BrokerHandle;

beforeAll(async () => {
  broker = await startBroker({ port: 0 });
});
afterAll(async () => {
  await broker.stop();
});

async function proton(queue: string, mode: string): Promise<Record<string, unknown>> {
  const { stdout } = await run(
    '/usr/bin/python3',
    ['test/support/proton_link_setup.py', broker.url, queue, mode],
    { timeout: 90_000 },
  );
  return JSON.parse(stdout.trim().split('\n').pop()!) as Record<string, unknown>;
}

function depth(queue: string): number | undefined {
  return broker.stats().queues.find((q) => q.name === queue)?.depth;
}

/** The termini of the attach rhea received for an open link (rhea keeps the decoded frame). */
function remoteTermini(link: unknown): { source?: { address?: string }; target?: { address?: string } } {
  return (link as { remote: { attach: { source?: { address?: string }; target?: { address?: string } } } })
    .remote.attach;
}

describe('link setup with Qpid Proton Python', () => {
  it('answers a sender and a receiver with both termini', async () => {
    const out = await proton('setup-q', 'attach');
    expect(out).toEqual({
      sender: { source: { address: 'proton-out' }, target: { address: 'setup-q' } },
      receiver: { source: { address: 'setup-q' }, target: { address: 'proton-in' } },
    });
  });

  it('lets a copy-mode browser see every message and leaves them for a consumer', async () => {
    const out = await proton('browse-q', 'browse');
    const bodies = ['m-0', 'm-1', 'm-2', 'm-3', 'm-4'];
    expect(out.mode).toBe('copy');
    expect(out.browsed).toEqual(bodies);
    expect(out.consumed).toEqual(bodies);
    expect(depth('browse-q')).toBe(0);
  });

  it('honours quorate:dedup in the target capabilities', async () => {
    const out = await proton('dedup-caps-q', 'dedup');
    expect(out.offered).toContain('quorate:dedup');
    expect(depth('dedup-caps-q')).toBe(1);
  });
});

describe('link setup with rhea', () => {
  let conn: RheaConnection;
  beforeAll(async () => {
    conn = await connect({ port: broker.port });
  });
  afterAll(() => {
    conn.close();
  });

  it('sees its own terminus echoed in the answering attach of both link kinds', async () => {
    const sender = conn.open_sender({ target: { address: 'rhea-setup-q' }, source: { address: 'mine' } });
    const receiver = conn.open_receiver({ source: { address: 'rhea-setup-q' }, target: { address: 'me' } });
    await Promise.all([
      new Promise((r) => sender.once('sendable', r)),
      new Promise((r) => receiver.once('receiver_open', r)),
    ]);
    expect(remoteTermini(sender).target).toMatchObject({ address: 'rhea-setup-q' });
    expect(remoteTermini(sender).source).toMatchObject({ address: 'mine' });
    expect(remoteTermini(receiver).source).toMatchObject({ address: 'rhea-setup-q' });
    expect(remoteTermini(receiver).target).toMatchObject({ address: 'me' });
    sender.close();
    receiver.close();
  });
});
