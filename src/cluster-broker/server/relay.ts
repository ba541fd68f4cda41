/**
 * The anonymous relay (a sender attached with a null target; docs/broker-features.md): each
 * message goes to the queue its `to` names. The relay is a sender like any other
 * (docs/security.md#identity): every message's `to` passes the checks an attach to that address
 * would (its form and length, the user's send permission; a v2 `to`, `/queues/NAME`, names queue
 * NAME as on attach, docs/management.md#v2-addresses), and a queue it auto-creates counts
 * toward the connection's cap and waits out a resource alarm, exactly as an attach's does.
 */
import type { AmqpErrorBody } from '../../codec/index.js';
import { notPermitted, queueOfAddress, whyNotCreate } from './attach-support.js';
import type { LinkHost } from './link-host.js';

export class RelayTargets {
  /** Queues this link asked to create and whose declare has not committed yet. */
  private readonly declaring = new Set<string>();

  constructor(private readonly host: LinkHost) {}

  /**
   * The queue a relayed message goes to, or why it is refused (the message is rejected with it;
   * the link stays usable). A queue it may auto-create is declared first (submission order is
   * commit order, so the declare applies before the enqueue).
   */
  target(to: unknown): string | AmqpErrorBody {
    const queue = queueOfAddress(to);
    if (typeof queue !== 'string') {
      const missing = to === undefined || to === null || to === '';
      return {
        condition: missing ? 'amqp:not-found' : 'amqp:invalid-field',
        description: missing ? "a relayed message needs a 'to' naming its queue" : `'to': ${queue.why}`,
      };
    }
    const refusal = notPermitted(this.host, 'send', queue);
    if (refusal !== undefined) {
      this.host.ctx.opts.logger.debug?.({ user: this.host.user, address: queue }, 'relayed message refused');
      return refusal;
    }
    const { backend, opts } = this.host.ctx;
    if (backend.state.hasQueue(queue) || this.declaring.has(queue)) return queue;
    // not auto-created: the enqueue is refused (not-found), never a silent drop
    if (!opts.autoCreateQueues || queue.startsWith('$')) return queue;
    const cannot = whyNotCreate(this.host);
    if (cannot !== undefined) {
      return {
        condition: 'amqp:resource-limit-exceeded',
        description: `cannot create '${queue}': ${cannot}`,
      };
    }
    this.declaring.add(queue);
    this.host.queuesCreated++;
    backend
      .submit({ type: 'declare', leaderTime: backend.now(), queue, options: opts.queueDefaults })
      .then(
        (r) => {
          // made meanwhile by someone else: not this connection's
          if (!r.created) this.host.queuesCreated--;
        },
        () => {
          // the enqueue that follows is refused (not-found)
          this.host.queuesCreated--;
        },
      )
      .finally(() => this.declaring.delete(queue));
    return queue;
  }
}
