/**
 * Every federation link of one broker (docs/federation.md): one queue link per (upstream, queue)
 * and one topic link per (upstream, topic).
 * A single node runs them all from the start; a cluster member runs them only while the
 * replicated log names it the owner (`setActive`), and keeps them on standby otherwise.
 */
import type { Logger } from '../../common/logger.js';
import type { ResolvedUpstream } from './config.js';
import type { FederationLink, LinkOptions } from './link.js';
import type { FederationLinkState } from './link-state.js';
import type { LocalQueues } from './local-queues.js';
import { queueLink } from './queue-link.js';
import { topicLink } from './topic-link.js';

export interface FederationOptions {
  upstreams: readonly ResolvedUpstream[];
  local: LocalQueues;
  logger: Logger;
  /** Credit re-read interval of each link, ms. */
  pollMs?: number;
}

export class Federation {
  private readonly links: FederationLink[] = [];
  /** undefined until first told: the links show `stopped` until then. */
  private active: boolean | undefined;
  private change: Promise<void> = Promise.resolve();

  constructor(o: FederationOptions) {
    for (const upstream of o.upstreams) {
      const options: LinkOptions = {
        upstream,
        local: o.local,
        logger: o.logger,
        ...(o.pollMs !== undefined ? { pollMs: o.pollMs } : {}),
      };
      for (const queue of upstream.queues) this.links.push(queueLink(options, queue));
      for (const topic of upstream.topics) this.links.push(topicLink(options, topic));
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

  /** The queues its queue links feed, each once (their demand is reported across a cluster). */
  queues(): string[] {
    return [...new Set(this.links.filter((l) => l.kind === 'queue').map((l) => l.address))];
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
