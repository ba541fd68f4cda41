/**
 * The broker simulation's clients (broker-sim-workload.ts): what an AMQP server asks of its member's
 * ClusterBackend, through `backend.submit()` only. Producers (with in-doubt re-sends of the same
 * message-id) and competing consumers (acquire, settle with every outcome, detach; the same link
 * keys on every member, so a re-attach elsewhere claims). An enqueue counts as acknowledged only
 * when submit resolves it; "outcome unknown" puts it in doubt (re-sent later, like a client
 * after a failover).
 *
 * The backend's answers are checked as they come: a submit resolves with a result of its own
 * event's type (BrokerBackend: ResultOf) and rejects only with "outcome unknown".
 */
import type { ClusterBackend } from '../../../../src/cluster-broker/cluster/cluster-backend.js';
import type { BrokerEvent, SettleOutcome } from '../../../../src/cluster-broker/core/events.js';
import type { ResultOf } from '../../../../src/cluster-broker/core/results.js';
import { BackendClosedError, OutcomeUnknownError } from '../../../../src/cluster-broker/server/backend.js';
import type { Rng } from '../../replication/sim/rng.js';
import { ContractViolation } from './contract-checker.js';

export interface Client {
  kind: 'producer' | 'consumer';
  /** A consumer's link key (`containerId/linkName`). */
  link: string;
  /** Seqs this consumer was given and has not settled yet. */
  held: number[];
}

const QUEUE = 'q';

export class SimClients {
  /** Message-ids whose enqueue a submit resolved (not refused). */
  readonly acked = new Set<string>();
  /** Message-ids sent with a TTL (they may expire). */
  readonly withTtl = new Set<string>();
  /** The first broken promise seen in an answer (the run loop throws it). */
  violation: ContractViolation | undefined;
  private readonly inDoubt: string[] = [];
  private keys = 0;
  private declared = false;

  constructor(private readonly rng: Rng) {}

  /** A member's clients at its start: 0-2 producers, 0-2 consumers. */
  newClients(): Client[] {
    const clients: Client[] = [];
    const producers = this.rng.int(0, 2);
    const consumers = this.rng.int(0, 2);
    for (let c = 0; c < producers; c++) clients.push({ kind: 'producer', link: '', held: [] });
    for (let c = 0; c < consumers; c++) {
      clients.push({ kind: 'consumer', link: `cont${this.rng.int(1, 4)}/link`, held: [] });
    }
    return clients;
  }

  /**
   * One action of `client` on a serving member; returns the ms until its next one. `alive` says
   * whether the member process that ran it is still up (a crashed member's answers are gone).
   */
  step(backend: ClusterBackend, client: Client, alive: () => boolean): number {
    if (!this.declared) {
      const declare = { type: 'declare', leaderTime: backend.now(), queue: QUEUE, options: {} } as const;
      this.submit(backend, declare, () => {
        this.declared = true;
      });
      return 10;
    }
    if (client.kind === 'producer') {
      this.produce(backend);
      return this.rng.range(2, 25);
    }
    this.consume(backend, client, alive);
    return this.rng.range(2, 30);
  }

  private produce(backend: ClusterBackend): void {
    const resend = this.inDoubt.length > 0 && this.rng.chance(0.3);
    const key = resend ? this.inDoubt.shift()! : `s:k${++this.keys}`;
    const ev: BrokerEvent & { type: 'enqueue' } = {
      type: 'enqueue',
      leaderTime: backend.now(),
      queue: QUEUE,
      message: new Uint8Array([1, 2, 3, this.keys & 0xff]),
      dedupKey: key,
    };
    if (!resend && this.rng.chance(0.05)) {
      ev.expiresAt = ev.leaderTime + this.rng.int(5, 200);
      this.withTtl.add(key);
    }
    this.submit(
      backend,
      ev,
      (r) => {
        if (r.status !== 'refused') this.acked.add(key);
      },
      () => this.inDoubt.push(key),
    );
  }

  private consume(backend: ClusterBackend, client: Client, alive: () => boolean): void {
    const consumer = client.link;
    const r = this.rng.next();
    if (client.held.length > 0 && r < 0.6) {
      const seqs = client.held.splice(0, this.rng.int(1, client.held.length));
      const outcome: SettleOutcome = this.rng.pick<SettleOutcome>([
        { type: 'accepted' },
        { type: 'accepted' },
        { type: 'accepted' },
        { type: 'released' },
        { type: 'modified', deliveryFailed: true },
        { type: 'modified', undeliverableHere: true },
        { type: 'rejected' },
      ]);
      this.submit(backend, { type: 'settle', leaderTime: backend.now(), consumer, seqs, outcome }, () => {});
    } else if (r < 0.66) {
      // the link detaches; its next acquire re-attaches it here and claims it from anywhere
      client.held = [];
      this.submit(backend, { type: 'release-consumer', leaderTime: backend.now(), consumer }, () => {});
    } else {
      const acquire = {
        type: 'acquire',
        leaderTime: backend.now(),
        queue: QUEUE,
        consumer,
        max: this.rng.int(1, 3),
      } as const;
      this.submit(backend, acquire, (res) => {
        if (alive()) for (const m of res.messages) client.held.push(m.seq);
      });
    }
  }

  private submit<E extends BrokerEvent>(
    backend: ClusterBackend,
    event: E,
    onResult: (r: ResultOf<E>) => void,
    onUnknown: () => void = () => {},
  ): void {
    backend.submit(event).then(
      (r) => {
        if (r.type === event.type) onResult(r);
        else this.violation ??= new ContractViolation(`a ${event.type} was answered with a ${r.type} result`);
      },
      (err: unknown) => {
        if (err instanceof OutcomeUnknownError || err instanceof BackendClosedError) onUnknown();
        else this.violation ??= new ContractViolation(`a ${event.type} failed with ${String(err)}`);
      },
    );
  }
}
