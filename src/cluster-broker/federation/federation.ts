/**
 * Every federation link of one broker (docs/federation.md): one QueueLink per (upstream, queue).
 * A single node runs them all from the start; a cluster member runs them only while the
 * replicated log names it the owner (`setActive`), and keeps them on standby otherwise.
 */
import type { Logger } from '../../common/logger.js';
import type { ResolvedUpstream } from './config.js';
import type { FederationLinkState } from './link-state.js';
import type { LocalQueues } from './local-queues.js';
import { QueueLink } from './queue-link.js';

export interface FederationOptions {
  upstreams: readonly ResolvedUpstream[];
  local: LocalQueues;
  logger: Logger;
  /** Demand re-read interval of each link, ms. */
  pollMs?: number;
}

export class Federation {
  private readonly links: QueueLink[] = [];
  /** undefined until first told: the links show `stopped` until then. */
  private active: boolean | undefined;
  private change: Promise<void> = Promise.resolve();

  constructor(o: FederationOptions) {
    for (const upstream of o.upstreams) {
      for (const queue of upstream.queues) {
        this.links.push(
          new QueueLink({
            upstream,
            queue,
            local: o.local,
            logger: o.logger,
            ...(o.pollMs !== undefined ? { pollMs: o.pollMs } : {}),
          }),
        );
      }
    }
  }

  /** Runs every link (true) or stops them into standby (false); changes apply in call order. */
  setActive(active: boolean): Promise<void> {
    if (active === this.active) return this.change;
    this.active = active;
    this.change = this.change.then(async () => {
      if (active) for (const l of this.links) l.start();
      else await Promise.all(this.links.map((l) => l.stop('standby')));
    });
    return this.change;
  }

  /** The queues its links feed, each once. */
  queues(): string[] {
    return [...new Set(this.links.map((l) => l.queue))];
  }

  /** Every link's state now. */
  state(): FederationLinkState[] {
    return this.links.map((l) => l.state());
  }

  /** Stops every link for good. */
  async stop(): Promise<void> {
    this.active = false;
    await this.change;
    await Promise.all(this.links.map((l) => l.stop('stopped')));
  }
}
