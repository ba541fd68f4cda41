/**
 * What both modes of the federation demo share: the queue mode (`npm run demo -- --federation`,
 * federation-demo.ts) and the topic mode (`--federation --topic`, federation-topic-demo.ts). Two
 * local clusters, `east` (upstream) and `west` (it federates east's queue or topic); a producer
 * on east; consumers whose exactly-once bookkeeping is a `Ledger`; a nemesis that kill -9s a
 * member every few seconds, sides alternating; the drain; the summary's table and verdict. A
 * mode says what west federates, which consumers it opens and how its summary reads.
 */
import { type Connection, connect, type Receiver, type SenderOptions } from 'quorate';
import { type ClusterHandle, startCluster, type UpstreamConfig } from 'quorate/broker';
import { everyMemberServes, formatGrid, memberAt, produce } from './demo-cluster.js';
import { DemoProgress, type ProgressSnapshot } from './demo-progress.js';

export interface FederationDemoOptions {
  durationMs: number;
  killEveryMs: number;
  nodes: number;
  window: number;
  holdMs: number;
}

export type SideName = 'east' | 'west';

/** One cluster, and what was handed out there (by its consumer, or its subscription). */
export interface Side {
  name: SideName;
  cluster: ClusterHandle;
  /** distinct ids handed out here */
  received: Set<string>;
  /** hand-outs of an id after a broker had confirmed its accept (where the ledger says) */
  duplicates: number;
  kills: number;
  failovers: number;
}

/**
 * The hand-outs of one stream of messages each of which must be consumed exactly once: in the
 * queue mode one ledger for both clusters (a message is consumed on one side or the other), in
 * the topic mode one per subscription (each gets every message).
 */
export interface Ledger {
  /** ids handed out */
  handedOut: Set<string>;
  /** ids whose accept a broker confirmed, and on which side */
  confirmed: Map<string, SideName>;
  /** duplicates whose confirmed accept was on the other cluster */
  crossDuplicates: number;
  /** handed out again after an accept in doubt: at-least-once, not a duplicate */
  redeliveredInDoubt: number;
}

export function newLedger(): Ledger {
  return { handedOut: new Set(), confirmed: new Map(), crossDuplicates: 0, redeliveredInDoubt: 0 };
}

/** What the producer did. */
export interface ProducerTally {
  /** sends started */
  attempted: number;
  /** ids east acknowledged */
  acknowledged: Set<string>;
}

/** A receiver, the side it consumes on, and the ledger its hand-outs are checked against. */
export interface DemoConsumer {
  receiver: Receiver;
  side: Side;
  ledger: Ledger;
}

/** What a mode opens its consumers with. */
export interface FederatedPair {
  /** east, then west */
  sides: Side[];
  /** A connection to `side` whose failovers are counted and printed; closed when the pair stops. */
  open(side: Side, role: string): Promise<Connection>;
}

/** One mode of the demo: the queue or the topic. */
export interface FederationMode {
  /** the queue or topic west federates, the producer sends to and the consumers read */
  address: string;
  /** for the opening line: `queue demo-orders` */
  what: string;
  /** the container-id prefix of the demo's connections */
  containerIdPrefix: string;
  /** what west federates from east */
  federate: Pick<UpstreamConfig, 'queues' | 'topics'>;
  senderOptions?: SenderOptions;
  /** Opens the consumers; everything published after this resolves must reach them. */
  openConsumers(pair: FederatedPair): Promise<DemoConsumer[]>;
  /** The received figure of the live progress line. */
  receivedNow(sides: Side[]): ProgressSnapshot['received'];
  /** Acknowledged messages not yet received everywhere they must be (the drain waits for 0). */
  missing(tally: ProducerTally, sides: Side[]): number;
  /** Prints the tables; returns the exit code. */
  summarize(tally: ProducerTally, sides: Side[]): number;
}

/**
 * Starts both clusters, waits until a west member runs the federation link (for a topic: the
 * link's durable subscription on east exists), opens the mode's consumers, then produces on east
 * for the duration while the nemesis kills, and drains. Returns the mode's summary's exit code.
 */
export async function runFederationMode(o: FederationDemoOptions, mode: FederationMode): Promise<number> {
  const progress = new DemoProgress(process.stdout, o.durationMs);
  progress.line(`starting two ${o.nodes}-member clusters: east, and west federating east's ${mode.what}...`);
  const tally: ProducerTally = { attempted: 0, acknowledged: new Set() };
  const sides: Side[] = [];
  const conns: Connection[] = [];
  const side = (name: SideName, cluster: ClusterHandle): Side => {
    const s = { name, cluster, received: new Set<string>(), duplicates: 0, kills: 0, failovers: 0 };
    sides.push(s);
    return s;
  };
  let owner: LinkOwnerPoll | undefined;
  try {
    const east = side('east', await startCluster({ nodes: o.nodes, autoRestart: true, clusterId: 'east' }));
    // a short reconnect delay: the link's upstream members are killed too
    const upstream: UpstreamConfig = { name: 'east', urls: east.cluster.urls, reconnectDelayMs: 500 };
    const federation = { upstreams: [{ ...upstream, ...mode.federate }] };
    const west = side(
      'west',
      await startCluster({ nodes: o.nodes, autoRestart: true, clusterId: 'west', federation }),
    );
    for (const s of sides)
      for (const m of s.cluster.members())
        progress.line(`  ${s.name}/${m.id}  ${m.url}  ${m.httpUrl}  pid ${m.pid}`);
    owner = pollLinkOwner(west.cluster, (id) => progress.line(`west: the federation link runs on ${id}`));
    await until(() => owner?.current() !== undefined, 60_000, 'a west member running the federation link');

    const open = async (s: Side, role: string): Promise<Connection> => {
      const conn = await connect({
        urls: s.cluster.urls,
        containerId: `${mode.containerIdPrefix}-${role}`,
        idleTimeoutMs: 2000,
      });
      conns.push(conn);
      conn.on('failover', (e) => {
        s.failovers++;
        progress.line(
          `${role}: failover ${e.from ?? '?'} -> ${e.to} in ${e.durationMs} ms (re-sent ${e.resent})`,
        );
      });
      return conn;
    };
    const producer = await open(east, 'producer');
    const sender = await producer.openSender(mode.address, mode.senderOptions);
    const consumers = await mode.openConsumers({ sides, open });
    const consuming = consumers.map((c) => consume(c));

    const started = Date.now();
    const stopAt = started + o.durationMs;
    const victims: Record<SideName, () => string | undefined> = {
      east: () => memberAt(east.cluster, producer.url)?.id,
      west: owner.current,
    };
    const nemesis = killLoop(sides, victims, mode.address, progress, stopAt, o.killEveryMs);
    const snapshot = (): ProgressSnapshot => ({
      elapsedMs: Date.now() - started,
      sent: tally.attempted,
      acknowledged: tally.acknowledged.size,
      received: mode.receivedNow(sides),
      duplicates: total(sides, 'duplicates'),
      kills: total(sides, 'kills'),
      failovers: total(sides, 'failovers'),
    });
    const ticker = setInterval(() => progress.update(snapshot()), 250);
    await produce({ sender, window: o.window, stopAt, tally, accepted: (id) => tally.acknowledged.add(id) });
    await nemesis;
    progress.line('producer done; draining both clusters...');
    // the link moves a backlog at its own pace: drain while messages keep arriving
    let lastCount = -1;
    let lastProgressAt = Date.now();
    while (mode.missing(tally, sides) > 0 && Date.now() - lastProgressAt < 15_000) {
      const count = sides.reduce((n, s) => n + s.received.size, 0);
      if (count !== lastCount) [lastCount, lastProgressAt] = [count, Date.now()];
      await sleep(100);
    }
    clearInterval(ticker);
    await Promise.all(consumers.map((c) => c.receiver.close().catch(() => {})));
    await Promise.all(consuming);
    progress.update(snapshot());
    progress.done();
  } finally {
    owner?.stop();
    await Promise.all(conns.map((c) => c.close().catch(() => {})));
    if (o.holdMs > 0) {
      progress.line(`holding both clusters ${o.holdMs / 1000} s (status pages at the URLs above)`);
      await sleep(o.holdMs);
    }
    await Promise.all(sides.map((s) => s.cluster.stop()));
  }
  return mode.summarize(tally, sides);
}

export function total(sides: Side[], counter: 'duplicates' | 'kills' | 'failovers'): number {
  return sides.reduce((n, s) => n + s[counter], 0);
}

/**
 * Prints the summary grid (a row per side and one for the whole), the notes under it and the
 * verdict; 0 when `ok`, else 1.
 */
export function printSummary(o: {
  header: string[];
  rows: (number | string)[][];
  notes: string[];
  ok: boolean;
  okText: string;
}): number {
  process.stdout.write(`\n${formatGrid(o.header, o.rows)}\n`);
  for (const note of o.notes) process.stdout.write(`${note}\n`);
  process.stdout.write(o.ok ? `\nOK: ${o.okText}\n` : '\nFAILED: see the table above.\n');
  return o.ok ? 0 : 1;
}

/**
 * Takes every delivery and accepts it, accepts running concurrently (each resolves when the
 * cluster has committed it). An id handed out again after a broker confirmed its accept is a
 * duplicate; after an accept that was in doubt (the member died before confirming it), the
 * broker was right to offer it again: at-least-once, counted apart.
 */
async function consume({ receiver, side, ledger }: DemoConsumer): Promise<void> {
  const accepting = new Set<Promise<void>>();
  try {
    for await (const d of receiver) {
      const id = String(d.message.messageId);
      const acceptedOn = ledger.confirmed.get(id);
      if (acceptedOn !== undefined) {
        side.duplicates++;
        if (acceptedOn !== side.name) ledger.crossDuplicates++;
      } else if (ledger.handedOut.has(id)) ledger.redeliveredInDoubt++;
      ledger.handedOut.add(id);
      side.received.add(id);
      const p: Promise<void> = d
        .accept()
        .then(() => {
          ledger.confirmed.set(id, side.name);
        })
        .catch(() => {
          // in doubt: the message may be offered again, here or (through a queue link) on the other side
        })
        .finally(() => accepting.delete(p));
      accepting.add(p);
    }
  } catch {
    // the receiver was closed
  }
  await Promise.all(accepting);
}

interface LinkOwnerPoll {
  /** the member running the link as last polled (kept while no member answers) */
  current(): string | undefined;
  stop(): void;
}

/** Every 500 ms: which west member runs the link; `changed` on every new one. */
function pollLinkOwner(cluster: ClusterHandle, changed: (id: string) => void): LinkOwnerPoll {
  let owner: string | undefined;
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    cluster
      .federation()
      .then((links) => {
        const now = links.find((l) => l.state === 'running')?.member;
        if (now !== undefined && now !== owner) changed(now);
        owner = now ?? owner;
      })
      .catch(() => undefined)
      .finally(() => {
        busy = false;
      });
  }, 500);
  return { current: () => owner, stop: () => clearInterval(timer) };
}

async function until(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs / 1000} s: ${what}`);
    await sleep(100);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Every `everyMs`, sides alternating, once every member of that side serves: kill -9 its victim. */
async function killLoop(
  sides: Side[],
  victims: Record<SideName, () => string | undefined>,
  /** what the "every member serves" probe attaches a sender to */
  probeAddress: string,
  progress: DemoProgress,
  stopAt: number,
  everyMs: number,
): Promise<void> {
  const what: Record<SideName, string> = {
    east: 'the member the producer uses',
    west: 'the member running the federation link',
  };
  let next = Date.now() + everyMs;
  let turn = 0;
  while (Date.now() < stopAt - everyMs / 2) {
    await sleep(100);
    if (Date.now() < next) continue;
    const s = sides[turn % sides.length]!;
    if (!(await everyMemberServes(s.cluster, probeAddress))) continue; // restarted members must have caught up
    const id = victims[s.name]();
    const victim = s.cluster.members().find((m) => m.id === id);
    if (!victim) continue;
    progress.line(`kill -9 ${s.name}/${victim.id} (pid ${victim.pid}), ${what[s.name]}`);
    await s.cluster.kill(victim.id, { restart: true });
    s.kills++;
    turn++;
    next = Date.now() + everyMs;
  }
}
