/**
 * What the demos (`npm run demo`, and its `--federation` modes) ask of a running cluster, the
 * producer they all run, and the tables they end with.
 */
import { connect, type Sender } from 'quorate';
import type { ClusterHandle } from 'quorate/broker';

/** The leader as `httpUrl`'s member sees it (undefined: no answer). */
export async function leaderOf(httpUrl: string | null): Promise<string | undefined> {
  if (httpUrl === null) return undefined;
  try {
    const res = await fetch(`${httpUrl}/api/overview`, { signal: AbortSignal.timeout(1000) });
    return ((await res.json()) as { leader: string | null }).leader ?? undefined;
  } catch {
    return undefined;
  }
}

/**
 * True when every member accepts a client connection and a sender on `queue`: a member serves
 * only once it is quorate and has caught up with the log, so this is the demos' "every member
 * has caught up".
 */
export async function everyMemberServes(cluster: ClusterHandle, queue: string): Promise<boolean> {
  const members = cluster.members();
  if (!members.every((m) => m.state === 'running')) return false;
  const probes = members.map(async (m) => {
    const probe = await connect({
      urls: m.url,
      reconnect: false,
      timeoutMs: 2000,
      containerId: `probe-${m.id}`,
    });
    try {
      await probe.openSender(queue, { timeoutMs: 2000 });
    } finally {
      await probe.close().catch(() => {});
    }
  });
  const results = await Promise.allSettled(probes);
  return results.every((r) => r.status === 'fulfilled');
}

/** The member of `cluster` serving `url`, its AMQP or its WebSocket URL (undefined: none, or no URL). */
export function memberAt(cluster: ClusterHandle, url: string | undefined) {
  return cluster
    .members()
    .find(
      (m) =>
        url !== undefined && (sameEndpoint(m.url, url) || (m.wsUrl != null && sameEndpoint(m.wsUrl, url))),
    );
}

/** The member a kill loop is about to kill -9. */
export interface Victim {
  id: string;
  pid: number | undefined;
  /** it was the leader as it saw itself just before the kill */
  wasLeader: boolean;
}

/**
 * Every `everyMs` until `stopAt` (or `signal` aborts), once every member serves again, kill -9
 * the member the client uses (`inUse()`: its URL, AMQP or WebSocket); the supervisor restarts it.
 * `killing` is told just before each kill, `killed` just after.
 */
export async function killInUseLoop(o: {
  cluster: ClusterHandle;
  /** what the "every member serves" probe attaches a sender to */
  queue: string;
  inUse: () => string | undefined;
  stopAt: number;
  everyMs: number;
  signal?: AbortSignal;
  killing: (victim: Victim) => void;
  killed?: (victim: Victim) => void;
}): Promise<void> {
  let next = Date.now() + o.everyMs;
  while (Date.now() < o.stopAt - o.everyMs / 2 && !o.signal?.aborted) {
    await new Promise((r) => setTimeout(r, 100));
    if (Date.now() < next) continue;
    if (memberAt(o.cluster, o.inUse()) === undefined) continue; // no client yet: no probes either
    if (!(await everyMemberServes(o.cluster, o.queue))) continue; // restarted members must have caught up
    const member = memberAt(o.cluster, o.inUse());
    if (!member || o.signal?.aborted) continue;
    const victim: Victim = {
      id: member.id,
      pid: member.pid ?? undefined,
      wasLeader: (await leaderOf(member.httpUrl)) === member.id,
    };
    o.killing(victim);
    await o.cluster.kill(victim.id, { restart: true });
    o.killed?.(victim);
    next = Date.now() + o.everyMs;
  }
}

export function sameEndpoint(a: string, b: string): boolean {
  const ua = new URL(a);
  const ub = new URL(b);
  return ua.port === ub.port && (ua.hostname === ub.hostname || [ua.hostname, ub.hostname].every(isLoopback));
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '127.0.0.1' || host === '::1';
}

/**
 * Sends until `stopAt` with `window` sends in flight, each message with its own stable id
 * (`order-<n>`): the client re-sends what a failover left unanswered, and the broker's duplicate
 * detection recognises the id. `accepted(id)` for each one the broker acknowledged; a send that
 * ends otherwise (refused, deadline, given up) is not acknowledged and is not expected anywhere.
 */
export async function produce(o: {
  sender: Sender;
  window: number;
  stopAt: number;
  /** counts every send started */
  tally: { attempted: number };
  accepted: (id: string) => void;
}): Promise<void> {
  let seq = 0;
  const inflight = new Set<Promise<void>>();
  while (Date.now() < o.stopAt) {
    const id = `order-${++seq}`;
    o.tally.attempted++;
    const p = o.sender
      .send({ messageId: id, durable: true, body: { order: seq, at: Date.now() } }, { timeoutMs: 60_000 })
      .then((r) => {
        if (r.state === 'accepted') o.accepted(id);
      })
      .catch(() => {
        // not acknowledged (deadline, or gave up): it does not count
      })
      .finally(() => inflight.delete(p));
    inflight.add(p);
    if (inflight.size >= o.window) await Promise.race(inflight);
  }
  await Promise.all(inflight);
}

/** A two-column table: a label and a value per row. */
export function formatTable(rows: [string, number | string][]): string {
  const w = Math.max(...rows.map(([k]) => k.length));
  const v = Math.max(...rows.map(([, x]) => String(x).length));
  const line = `+${'-'.repeat(w + 2)}+${'-'.repeat(v + 2)}+`;
  return [line, ...rows.map(([k, x]) => `| ${k.padEnd(w)} | ${String(x).padStart(v)} |`), line].join('\n');
}

/** A table with a header row: the first column left-aligned, the others right-aligned. */
export function formatGrid(header: string[], rows: (number | string)[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i] ?? '').length)));
  const line = `+${widths.map((w) => '-'.repeat(w + 2)).join('+')}+`;
  const row = (cells: (number | string)[]) =>
    `| ${cells.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]!) : String(c).padStart(widths[i]!))).join(' | ')} |`;
  return [line, row(header), line, ...rows.map(row), line].join('\n');
}
