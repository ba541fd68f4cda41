/**
 * The federation bench's control round (`--control`): a local send on west and an independent
 * local send on east at the same time (each cluster its own sender and consumer, no federation).
 * It puts the same six busy members and the client on the machine as the federated round, doing
 * two sends and two deliveries per message pair, but none of the link's work. Its figures say how
 * much of a moved message's CPU beyond one local send is the machine (six members sharing the
 * cores instead of three, each cluster at a lower rate) and how much is the federation's own.
 */
import { median } from './isolated-rate.js';

/** CPU per message (microseconds) of each process in a round, by label (`client`, `west leader n2`...). */
export type CpuUsByLabel = Readonly<Record<string, number | null>>;

/** The rounds' CPU per message: west's for the local round, each cluster's own for the control round. */
export interface ControlRounds {
  local: CpuUsByLabel;
  federated: CpuUsByLabel;
  control: CpuUsByLabel;
}

/** The control round set against the local and federated ones (broker CPU, microseconds per message). */
export interface ControlFigures {
  /** West's three members per message in each round. */
  west: { local: number | null; control: number | null; federated: number | null };
  /** East's three: per east message in the control round, per moved message in the federated one. */
  east: { control: number | null; federated: number | null };
  /** West's members per message, control / local: what sharing the machine with east costs west. */
  westControlOverLocal: number | null;
  /** West's members per message, federated / control: what west pays for federation beyond that. */
  westFederatedOverControl: number | null;
  /** Both clusters in the control round (a send and a delivery each) / west's in the local round. */
  sideBySideRatio: number | null;
  /** All six in the federated round / both clusters in the control round: federation's own share. */
  federatedOverSideBySide: number | null;
}

/** The summed CPU per message of a cluster's members (labels `east ...`, `west ...`); null if one is unread or none is there. */
export function clusterCpuUs(us: CpuUsByLabel, cluster: 'east' | 'west'): number | null {
  let total = 0;
  let found = false;
  for (const [label, v] of Object.entries(us)) {
    if (!label.startsWith(`${cluster} `)) continue;
    if (v === null) return null;
    total += v;
    found = true;
  }
  return found ? Math.round(total * 10) / 10 : null;
}

function ratio(a: number | null, b: number | null): number | null {
  return a === null || b === null || b <= 0 ? null : Math.round((a / b) * 100) / 100;
}

function sum(a: number | null, b: number | null): number | null {
  return a === null || b === null ? null : Math.round((a + b) * 10) / 10;
}

export function controlFigures(rounds: ControlRounds): ControlFigures {
  const west = {
    local: clusterCpuUs(rounds.local, 'west'),
    control: clusterCpuUs(rounds.control, 'west'),
    federated: clusterCpuUs(rounds.federated, 'west'),
  };
  const east = {
    control: clusterCpuUs(rounds.control, 'east'),
    federated: clusterCpuUs(rounds.federated, 'east'),
  };
  const sideBySide = sum(east.control, west.control);
  return {
    west,
    east,
    westControlOverLocal: ratio(west.control, west.local),
    westFederatedOverControl: ratio(west.federated, west.control),
    sideBySideRatio: ratio(sideBySide, west.local),
    federatedOverSideBySide: ratio(sum(east.federated, west.federated), sideBySide),
  };
}

/** The ratios of ControlFigures, each the median over the repeats that had one (null if none did). */
export type ControlRatios = Pick<
  ControlFigures,
  'westControlOverLocal' | 'westFederatedOverControl' | 'sideBySideRatio' | 'federatedOverSideBySide'
>;

export function medianControlRatios(figures: readonly ControlFigures[]): ControlRatios {
  const med = (pick: (f: ControlFigures) => number | null) => {
    const known = figures.map(pick).filter((v): v is number => v !== null);
    return known.length === 0 ? null : Math.round(median(known) * 100) / 100;
  };
  return {
    westControlOverLocal: med((f) => f.westControlOverLocal),
    westFederatedOverControl: med((f) => f.westFederatedOverControl),
    sideBySideRatio: med((f) => f.sideBySideRatio),
    federatedOverSideBySide: med((f) => f.federatedOverSideBySide),
  };
}

/** The lines one repeat prints for its control round. */
export function formatControlFigures(f: ControlFigures): string[] {
  const us = (v: number | null) => (v === null ? '-' : `${v.toFixed(1)} us`);
  const x = (v: number | null) => (v === null ? '-' : v.toFixed(2));
  return [
    `west's members per message: local ${us(f.west.local)}, control ${us(f.west.control)}, federated ${us(f.west.federated)}; control / local ${x(f.westControlOverLocal)}, federated / control ${x(f.westFederatedOverControl)}`,
    `east's members per message: control ${us(f.east.control)} (its own local send), federated ${us(f.east.federated)}`,
    `broker CPU, two local sends side by side / one alone: ${x(f.sideBySideRatio)}; moved message / two side by side: ${x(f.federatedOverSideBySide)}`,
  ];
}
