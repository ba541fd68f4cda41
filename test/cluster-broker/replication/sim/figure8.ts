/**
 * The fault schedule of Raft figure 8, built from partitions alone and driven by what the
 * members show (who was elected, what a leader applied), never by reaching into a Replica.
 *
 * Five members (three: the buddy and the voter drop out):
 *  1. `old` is elected: it reaches only `buddy`; the rest stay together. Its no-op (and what is
 *     proposed to it) lands on `old` and `buddy` only.
 *  2. `rival` wins among the rest: every link is cut at once, its no-op on its own log only.
 *  3. `old`, `buddy` and `swing` are joined (the voter and the rival stay cut off). One of the
 *     first two wins (`swing` votes for it: its log ends in an earlier term) and brings `swing`
 *     the entries of step 1, one per append.
 *  4. The moment that leader applies an entry of an earlier term it is cut off. Only a leader that
 *     commits by counting gets there before its own no-op has reached `swing`; a safe one
 *     commits its no-op first, and then `swing` refuses the rival.
 *  5. `rival` is joined to `swing` and the voter only (a bridge, so neither of them can gather the
 *     other's vote): their logs end in earlier terms than its own, so it wins and overwrites the
 *     entry the counting leader applied, and the checker sees a committed entry lost.
 * Then every link heals and the next round starts with the leader of the time; a round stuck
 * in a step (an election went another way) is abandoned after a while.
 */
import type { Entry } from '../../../../src/cluster-broker/replication/raft/types.js';
import type { Rng } from './rng.js';

/** What the schedule drives in the simulation. */
export interface Figure8Host {
  readonly rng: Rng;
  readonly size: number;
  /** Members that lead now, highest term first. */
  leaders(): number[];
  /** Cut every link, then join each group's members to one another. */
  connect(groups: number[][]): void;
  /** Join a to b and b to a. */
  link(a: number, b: number): void;
  /** Run `fire` `ms` simulated ms from now (dropped after the heal). */
  later(ms: number, fire: () => void): void;
  trace(line: string): void;
}

type Step = 'idle' | 'old-leads' | 'old-returns' | 'wait-commit' | 'rival-returns';

export class Figure8Schedule {
  private step: Step = 'idle';
  private round = 0;
  private old = -1;
  private buddy = -1;
  private rival = -1;
  private swing = -1;
  private voter = -1;
  private returner = -1;

  constructor(private readonly host: Figure8Host) {}

  /** Start the first round. */
  start(): void {
    this.next(this.host.rng.range(0, 100));
  }

  elected(i: number): void {
    const h = this.host;
    if (this.step === 'idle') {
      this.begin(i);
    } else if (this.step === 'old-leads') {
      if (i === this.old || i === this.buddy) return;
      this.rival = i;
      h.connect([]);
      h.trace(`figure 8: rival n${i + 1} cut off at its election`);
      h.later(h.rng.range(0, 60), () => this.oldReturns());
    } else if (this.step === 'old-returns') {
      if (i !== this.old && i !== this.buddy) {
        this.abandon('the swing member won');
        return;
      }
      this.returner = i;
      this.step = 'wait-commit';
    } else if (this.step === 'rival-returns') {
      h.trace(`figure 8: n${i + 1} won after the rival's return`);
      this.next(h.rng.range(50, 300));
    }
  }

  /** `leader` (of `term`) applied `e`. */
  applied(i: number, e: Entry, term: number): void {
    if (this.step !== 'wait-commit' || i !== this.returner || e.term >= term) return;
    const h = this.host;
    // cut off now: the appends it sent with this step are lost on the cut links
    h.connect([]);
    this.step = 'rival-returns';
    h.trace(`figure 8: n${i + 1} cut off as it applied ${e.index}@${e.term}`);
    h.later(h.rng.range(0, 60), () => {
      h.connect([]);
      h.link(this.rival, this.swing);
      if (this.voter >= 0) h.link(this.rival, this.voter);
    });
  }

  private begin(old: number): void {
    const h = this.host;
    const round = this.round;
    const others = h.rng.shuffle([...Array(h.size).keys()].filter((j) => j !== old));
    this.old = old;
    this.buddy = h.size === 5 ? others.pop()! : -1;
    h.connect([this.buddy >= 0 ? [old, this.buddy] : [old], others]);
    this.step = 'old-leads';
    h.trace(
      `figure 8: round ${round}, n${old + 1} leads with ${this.buddy >= 0 ? `n${this.buddy + 1}` : 'no one'}`,
    );
    h.later(1500, () => {
      if (this.round === round) this.abandon('no round end');
    });
  }

  private oldReturns(): void {
    const h = this.host;
    const rest = [...Array(h.size).keys()].filter(
      (j) => j !== this.old && j !== this.buddy && j !== this.rival,
    );
    h.rng.shuffle(rest);
    this.swing = rest[0]!;
    this.voter = rest.length > 1 ? rest[1]! : -1;
    h.connect([[this.old, ...(this.buddy >= 0 ? [this.buddy] : []), this.swing]]);
    this.step = 'old-returns';
    h.trace(`figure 8: n${this.old + 1} returns with swing n${this.swing + 1}`);
  }

  private abandon(why: string): void {
    this.host.trace(`figure 8: round ${this.round} abandoned (${why})`);
    this.next(this.host.rng.range(50, 300));
  }

  /** Heal every link, then start a round with the leader of the time (or the next one). */
  private next(ms: number): void {
    const h = this.host;
    this.round++;
    this.step = 'idle';
    h.connect([[...Array(h.size).keys()]]);
    const round = this.round;
    h.later(ms, () => {
      if (this.round !== round || this.step !== 'idle') return;
      const leader = h.leaders()[0];
      if (leader !== undefined) this.begin(leader);
    });
  }
}
