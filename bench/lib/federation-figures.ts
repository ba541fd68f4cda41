/**
 * The federation bench's figures (bench/federation.ts): the result types, the broker CPU ratio
 * and its share of idle CPU, and one repeat's printed lines.
 */
import { type ControlFigures, type ControlRatios, formatControlFigures } from './federation-control.js';
import { formatCpuPerMessage } from './process-cpu.js';

/** A figure of each measured round; the control round's only with `--control`. */
export type PerRound<T> = Record<'local' | 'federated', T> & { control?: T };
export type Round = keyof PerRound<unknown>;

/** One repeat's figures (the fields of FederationBenchResult of the same names), and its rounds' lengths. */
export type FederationRepeat = Omit<
  FederationBenchResult,
  'messages' | 'window' | 'repeats' | 'idleCpuMsPerSec'
> & {
  /** Wall seconds of each measured round (its share of the idle CPU). */
  seconds: PerRound<number>;
  /** The control round's rates (received per second on each cluster) and figures, with `--control`. */
  control?: { westPerSec: number; eastPerSec: number; figures: ControlFigures };
};

/** One run's figures; with `--repeat N` above 1 the rates and ratios are the repeats' medians. */
export interface FederationBenchResult {
  messages: number;
  window: number;
  /** Each repeat's figures, in order (one entry without `--repeat`). */
  repeats: FederationRepeat[];
  /** Received per second on west, sent to west. */
  localPerSec: number;
  /** Received per second on west, sent to east (through the link). */
  federatedPerSec: number;
  /** federated / local (target >= 0.5). */
  ratio: number;
  /**
   * Broker CPU per moved message (the six members, federated round) / broker CPU per local send
   * (west's three members, local round); target <= 2. Null when a member could not be read.
   */
  brokerCpuRatio: number | null;
  /**
   * The same ratio with each round's idle CPU taken out (each cluster's idle CPU per second times
   * the round's length, per message). Null when a member could not be read.
   */
  brokerCpuRatioNetOfIdle: number | null;
  /** CPU ms per second of each cluster's members (summed) with no traffic, after the warm-up. */
  idleCpuMsPerSec: { east: number | null; west: number | null };
  /** Received per second on west of messages that were all on east before the consumer came. */
  preloadedLinkPerSec?: number;
  /**
   * CPU per received message (microseconds, from the OS) of each process in each round: `client`
   * (this process: sender and consumer) and every member of both clusters, by role
   * (`east leader n1`, `west follower n2`...).
   */
  cpuUs: PerRound<Record<string, number | null>>;
  /**
   * Raft log entries committed per received message in each cluster in each round (the commit
   * index's growth over the round / messages): what the replication of a round costs, independent
   * of the machine's load. Null when no member answered.
   */
  logEntries: PerRound<{ east: number | null; west: number | null }>;
  /**
   * Log fsyncs per received message in each cluster in each round, all its members summed (one
   * per append round a member takes): how well the rounds batched, independent of the load.
   * Null when a member did not answer.
   */
  fsyncs: PerRound<{ east: number | null; west: number | null }>;
  /**
   * Which member each round's clients were on (`sender and consumer on west leader n2`): always
   * the member leading its cluster as the round starts, as in the e2e bench. `link`: the east
   * member west's link was connected to after the federated round (the client picks one at random).
   */
  clients: { local?: string; federated?: string; control?: string; preload?: string; link?: string };
  /** With `--control`: the control round's ratios (ControlFigures), medians over the repeats. */
  controlRatios?: ControlRatios;
}

/** The CPU per second of the members whose label starts with `cluster` (summed); null if one was unreadable. */
export function clusterIdle(idle: ReadonlyMap<string, number | null>, cluster: string): number | null {
  let total = 0;
  for (const [label, v] of idle) {
    if (!label.startsWith(cluster)) continue;
    if (v === null) return null;
    total += v;
  }
  return Math.round(total * 10) / 10;
}

export type IdleCpu = FederationBenchResult['idleCpuMsPerSec'];

/**
 * Each round's idle CPU per message (the clusters' idle CPU per second times the round's length,
 * over the messages: west's for the local round, both for the federated) and the broker CPU
 * ratio with it taken out; nulls where a member could not be read.
 */
export function idleShares(
  idle: IdleCpu,
  seconds: FederationRepeat['seconds'],
  cpuUs: FederationRepeat['cpuUs'],
  n: number,
): { localUs: number | null; federatedUs: number | null; netRatio: number | null } {
  const share = (msPerSec: number | null, s: number) =>
    msPerSec === null ? null : (msPerSec * s * 1000) / n;
  const localUs = share(idle.west, seconds.local);
  const federatedUs = share(
    idle.east === null || idle.west === null ? null : idle.east + idle.west,
    seconds.federated,
  );
  const broker = brokerCpuOf(cpuUs);
  const netRatio =
    broker.federatedUs !== null &&
    broker.localUs !== null &&
    federatedUs !== null &&
    localUs !== null &&
    broker.localUs > localUs
      ? Math.round(((broker.federatedUs - federatedUs) / (broker.localUs - localUs)) * 100) / 100
      : null;
  return { localUs, federatedUs, netRatio };
}

/** The summed CPU per message of the members whose label `counts` (not the client); null if one is unread. */
function brokerCpuUs(us: Record<string, number | null>, counts: (label: string) => boolean): number | null {
  let total = 0;
  for (const [label, v] of Object.entries(us)) {
    if (label === 'client' || !counts(label)) continue;
    if (v === null) return null;
    total += v;
  }
  return total;
}

/**
 * Broker CPU per moved message (all six members, federated round) over per local send (west's
 * three, local round), and both sums (microseconds); null where a member could not be read.
 */
export function brokerCpuOf(cpuUs: FederationRepeat['cpuUs']): {
  ratio: number | null;
  federatedUs: number | null;
  localUs: number | null;
} {
  const federatedUs = brokerCpuUs(cpuUs.federated, () => true);
  const localUs = brokerCpuUs(cpuUs.local, (label) => label.startsWith('west '));
  const ratio =
    federatedUs !== null && localUs !== null && localUs > 0
      ? Math.round((federatedUs / localUs) * 100) / 100
      : null;
  return { ratio, federatedUs, localUs };
}

/** One repeat's lines, as a run printed them before `--repeat`. */
export function logRepeat(
  log: (line: string) => void,
  rep: FederationRepeat,
  n: number,
  window: number,
  idleCpu: IdleCpu,
) {
  const { localPerSec: local, federatedPerSec: federated, clients: placement, cpuUs } = rep;
  const preloaded = rep.preloadedLinkPerSec;
  log(`${n} x 1 KiB, window ${window}, two 3-member clusters (east -> west), durable stores`);
  log(`local send to west, consumer on west:      ${local} msg/s received`);
  log(`send to east, consumer on west (the link): ${federated} msg/s received`);
  if (preloaded !== undefined) log(`link alone (${n} waiting on east):        ${preloaded} msg/s received`);
  log(
    `clients on each cluster's leader: local: ${placement.local ?? '-'}; federated: ${placement.federated ?? '-'}${placement.preload !== undefined ? `; link alone: ${placement.preload}` : ''}`,
  );
  log(`the link's upstream connection, after the federated round: east ${placement.link ?? '-'}`);
  log(`ratio federated / local: ${rep.ratio} (target >= 0.5)`);
  if (preloaded !== undefined && local > 0)
    log(`ratio link alone / local: ${Math.round((preloaded / local) * 100) / 100}`);
  const cpuLine = (us: Record<string, number | null>) => formatCpuPerMessage(new Map(Object.entries(us)));
  log(`CPU per received message, local:     ${cpuLine(cpuUs.local)}`);
  log(`CPU per received message, federated: ${cpuLine(cpuUs.federated)}`);
  if (rep.control !== undefined && cpuUs.control !== undefined) {
    log(
      `control (local sends on west and on east at once): west ${rep.control.westPerSec} msg/s, east ${rep.control.eastPerSec} msg/s received; ${placement.control ?? '-'}`,
    );
    log(`CPU per received message, control:   ${cpuLine(cpuUs.control)}`);
    for (const line of formatControlFigures(rep.control.figures)) log(line);
  }
  const broker = brokerCpuOf(cpuUs);
  log(
    `broker CPU per moved message / per local send: ${broker.ratio ?? '-'} (${broker.federatedUs?.toFixed(1) ?? '-'} us, all six members / ${broker.localUs?.toFixed(1) ?? '-'} us, west's three; target <= 2)`,
  );
  const idle = idleShares(idleCpu, rep.seconds, cpuUs, n);
  log(
    `idle CPU (no traffic, after the warm-up): east ${idleCpu.east ?? '-'} ms/s, west ${idleCpu.west ?? '-'} ms/s (members summed); its share per message: local ${idle.localUs?.toFixed(1) ?? '-'} us (west, ${rep.seconds.local.toFixed(1)} s), federated ${idle.federatedUs?.toFixed(1) ?? '-'} us (both, ${rep.seconds.federated.toFixed(1)} s)`,
  );
  log(
    `broker CPU per moved message / per local send, net of idle CPU: ${rep.brokerCpuRatioNetOfIdle ?? '-'}`,
  );
  const entries = (e: { east: number | null; west: number | null }) =>
    `east ${e.east ?? '-'}, west ${e.west ?? '-'}`;
  const controlEntries = (e: { east: number | null; west: number | null } | undefined) =>
    e === undefined ? '' : `; control: ${entries(e)}`;
  log(
    `log entries per received message, local: ${entries(rep.logEntries.local)}; federated: ${entries(rep.logEntries.federated)}${controlEntries(rep.logEntries.control)}`,
  );
  log(
    `log fsyncs per received message (members summed), local: ${entries(rep.fsyncs.local)}; federated: ${entries(rep.fsyncs.federated)}${controlEntries(rep.fsyncs.control)}`,
  );
}
