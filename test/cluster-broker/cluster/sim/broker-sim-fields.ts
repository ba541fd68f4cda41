/**
 * The ground floor of BrokerSimulation (broker-sim.ts): every field of a run, in one place so the
 * object keeps one shape, and the constructor, which draws each member's clock skew and snapshot
 * interval in their fixed order. Split from the network and its faults (broker-sim-network.ts), the
 * members (broker-sim-members.ts), the client workload (broker-sim-workload.ts) and the run loop
 * (broker-sim.ts) so each file has one job; a class chain, so every call stays a plain method call
 * on one object and the seeded draws keep their order.
 */
import { ClusterStateMachine } from '../../../../src/cluster-broker/cluster/cluster-state-machine.js';
import { EventQueue } from '../../replication/sim/event-queue.js';
import { Rng } from '../../replication/sim/rng.js';
import { SimDisk } from '../../replication/sim/sim-disk.js';
import type { BrokerSimOptions, Ev, SimNode } from './broker-sim-types.js';
import { ContractChecker } from './contract-checker.js';
import { SimClients } from './sim-clients.js';

export abstract class BrokerSimulationFields {
  protected readonly rng: Rng;
  protected readonly q = new EventQueue<Ev>();
  protected readonly nodes: SimNode[];
  protected readonly ids: string[];
  protected readonly checker = new ContractChecker();
  /** index -> hash of the state snapshot after applying it (first member to apply it). */
  protected readonly stateAt = new Map<number, string>();
  protected readonly clients: SimClients;
  protected conn: boolean[][];
  protected loss = 0;
  protected dup = 0;
  protected delayMax = 3;
  protected now = 0;
  protected healed = false;
  protected healAt = 0;
  protected acquired = 0;
  protected crashes = 0;
  protected timerIds = 0;
  protected readonly faultMs: number;
  protected readonly settleMs: number;

  constructor(protected readonly opts: BrokerSimOptions) {
    this.rng = new Rng(opts.seed);
    this.clients = new SimClients(this.rng);
    const n = opts.nodes ?? 3;
    this.ids = Array.from({ length: n }, (_, i) => `n${i + 1}`);
    this.conn = this.ids.map(() => this.ids.map(() => true));
    this.faultMs = opts.faultMs ?? 2000;
    this.settleMs = opts.settleMs ?? 8000;
    this.nodes = this.ids.map((id) => ({
      id,
      up: false,
      epoch: 0,
      core: undefined,
      port: undefined,
      backend: undefined,
      timers: new Map(),
      disk: new SimDisk(),
      inflight: undefined,
      timerAt: Number.POSITIVE_INFINITY,
      sm: new ClusterStateMachine(),
      outcome: undefined,
      incarnation: 0,
      skew: this.rng.range(-300, 300),
      clients: [],
      releasing: false,
      snapEvery: this.rng.int(5, 60),
    }));
  }
}
