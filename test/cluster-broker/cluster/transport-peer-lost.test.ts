/**
 * TcpTransport reports a member whose connection to us closed (`onPeerLost`): the hint on which
 * a follower campaigns at once when its leader dies instead of after an election timeout.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { freePort, waitFor } from '../../support/net.js';
import { startMemberTransport, type TestMember } from './transport-fixture.js';

let running: TestMember[] = [];
afterEach(async () => {
  await Promise.all(running.map((m) => m.transport.close()));
  running = [];
});

async function pair(): Promise<[TestMember, TestMember]> {
  const ports = { n1: await freePort(), n2: await freePort() };
  const n1 = await startMemberTransport({ id: 'n1', ports });
  const n2 = await startMemberTransport({ id: 'n2', ports });
  running.push(n1, n2);
  await waitFor(() => n1.transport.isConnected('n2') && n2.transport.isConnected('n1'), {
    timeoutMs: 20_000,
    what: 'both directions connected',
  });
  return [n1, n2];
}

describe('TcpTransport onPeerLost', () => {
  it('names the authenticated member whose connection closed, as soon as it closes', async () => {
    const [n1, n2] = await pair();
    expect(n1.lost).toEqual([]);
    await n2.transport.close(); // its sockets close, as a killed process's would
    running = [n1];
    await waitFor(() => n1.lost.length > 0, { timeoutMs: 10_000, what: 'n2 reported lost' });
    expect(n1.lost).toEqual(['n2']);
  });

  it('says nothing of its own connections when it closes itself', async () => {
    const [n1, n2] = await pair();
    await n1.transport.close();
    running = [n2];
    await waitFor(() => n2.lost.length > 0, { timeoutMs: 10_000, what: 'n1 reported lost on n2' });
    expect(n1.lost).toEqual([]);
  });
});
