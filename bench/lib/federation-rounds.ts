/**
 * The federation bench's rounds (bench/federation.ts): where a cluster's clients connect (its
 * leader), the processes whose CPU a round counts, and the flows the rounds time: a send received
 * elsewhere (local or across the link), the control round's two local sends at once, and the link
 * draining a preloaded queue.
 */
import { benchEndpoint, memberProcesses } from './broker-processes.js';
import type { ClusterMemberProcess, RunningBroker } from './brokers.js';
import { loadQuorate } from './built-package.js';
import type { CountedProcess } from './process-cpu.js';
import { receiveAll, sendAll, withFlow } from './quorate-flow.js';

const { connect } = await loadQuorate();

/** The client and the six members, labelled by cluster and role as the round starts. */
export async function federationProcesses(
  east: readonly ClusterMemberProcess[],
  west: readonly ClusterMemberProcess[],
): Promise<CountedProcess[]> {
  return [
    { label: 'client' },
    ...(await memberProcesses(east, 'east ')),
    ...(await memberProcesses(west, 'west ')),
  ];
}

export const FED = 'bench-fed';

/** Where a cluster's clients connect: the member leading it now, and its label (`leader n2`). */
export interface ClientEndpoint {
  urls: string[];
  label: string;
}

/**
 * The cluster's leader, as the e2e bench connects (benchEndpoint): a client on a follower would
 * add that follower's forwarding to the leader to the round's cost, and whether the first URL is
 * a follower is chance, so the local and federated rounds would not compare like for like.
 */
export async function leaderEndpoint(cluster: RunningBroker): Promise<ClientEndpoint> {
  const at = await benchEndpoint(cluster);
  const leader = at.processes.find((p) => p.label.startsWith('leader'));
  return { urls: [at.url.toString()], label: leader?.label ?? at.url.host };
}

/** Sends `n` to `queue` on `sendUrls`, received on `receiveUrls`: messages per second received. */
export async function round(
  sendUrls: string[],
  receiveUrls: string[],
  queue: string,
  n: number,
  window: number,
  body: Buffer,
  tag: string,
): Promise<number> {
  return withFlow(sendUrls, receiveUrls, queue, window, async (sender, receiver) => {
    const t0 = performance.now();
    // together: a failed send is the error reported (the receiver's end, when the connections
    // close after it, is not left unhandled)
    await Promise.all([receiveAll(receiver, n), sendAll(sender, n, window, body, tag)]);
    return Math.round((n / (performance.now() - t0)) * 1000);
  });
}

/**
 * The control round: `n` sent to west's `bench-local` and received on west, and at the same time
 * `n` sent to east's `bench-local` and received on east; each cluster's rate.
 */
export async function controlRound(
  urls: { east: string[]; west: string[] },
  flow: { n: number; window: number; body: Buffer; tag: string },
): Promise<{ westPerSec: number; eastPerSec: number }> {
  const { n, window, body, tag } = flow;
  const [westPerSec, eastPerSec] = await Promise.all([
    round(urls.west, urls.west, 'bench-local', n, window, body, `${tag}w`),
    round(urls.east, urls.east, 'bench-local', n, window, body, `${tag}e`),
  ]);
  return { westPerSec, eastPerSec };
}

/** `n` messages put on east with nobody asking for them, then a consumer on west: the link alone. */
export async function preloadedRound(
  east: string[],
  west: string[],
  n: number,
  window: number,
  body: Buffer,
  tag: string,
) {
  const pub = await connect({ urls: east, reconnect: false });
  try {
    await sendAll(await pub.openSender(FED), n, window, body, tag);
  } finally {
    await pub.close().catch(() => {});
  }
  const sub = await connect({ urls: west, reconnect: false });
  try {
    const t0 = performance.now();
    const receiver = await sub.openReceiver(FED, { credit: window, confirmAccept: false });
    await receiveAll(receiver, n);
    return Math.round((n / (performance.now() - t0)) * 1000);
  } finally {
    await sub.close().catch(() => {});
  }
}
