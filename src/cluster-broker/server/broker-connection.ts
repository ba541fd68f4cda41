/**
 * One client connection, without the socket: bytes in (`receive`), bytes out (through `io`),
 * time in (`tick`). It drives the protocol engine and turns its events into link handlers
 * (publisher / consumer / virtual). Usable in process, e.g. by a fuzzer feeding hostile bytes.
 *
 * It runs the shared adapter loop (protocol/engine-driver.ts) with output written once per turn
 * of the event loop (setImmediate): everything the engine and the backend's answers produce in
 * one I/O phase goes out in one write; a timer follows the engine's own deadline.
 *
 * This file is its event handling (engine events to link handlers, attaches); the class is a
 * chain, one job per file: broker-connection-fields.ts (every field, the constructor),
 * broker-connection-teardown.ts (closing, releasing the links) and broker-connection-socket.ts
 * (bytes in, timers, backpressure).
 */
import type { Attach } from '../../codec/index.js';
import {
  type EngineEvent,
  type Link,
  OutgoingDelivery,
  type ReceiverLink,
  type SenderLink,
} from '../../protocol/index.js';
import { attachConsumer, attachPublisher } from './attach.js';
import { BrokerConnectionSocket } from './broker-connection-socket.js';
import { BrowserLink } from './browser-link.js';
import { ConsumerLink } from './consumer-link.js';
import type { LinkGone } from './dynamic-nodes.js';
import type { LinkHandler, LinkHost } from './link-host.js';
import { ManagementRequestLink } from './management-node.js';
import { PublisherLink } from './publisher-link.js';
import { CoordinatorLink } from './transactions.js';

export type { ConnectionIo } from './broker-connection-fields.js';
export type { ConnectionInfo } from './broker-connection-socket.js';

export class BrokerConnection extends BrokerConnectionSocket implements LinkHost {
  /** Handle engine events; the output is written at the end of this turn (scheduleFlush). */
  process(): void {
    // Written at the end of this turn, not now: the backend's answers to what these events
    // submitted (acquires for new credit) resolve first, so a drain is answered with the
    // messages that were available rather than by an immediate "drained, nothing".
    if (this.handleEvents() && this.engine.hasPending) this.scheduleFlush();
  }

  /** Runs the engine's events through the handlers; false once the connection ended. */
  protected handleEvents(): boolean {
    if (this.ended) return false;
    for (;;) {
      const events = this.engine.pollEvents();
      if (events.length === 0) break;
      for (const ev of events) {
        try {
          this.onEvent(ev);
        } catch (err) {
          // a bug in a handler must not take the broker down: this connection goes, others stay
          this.ctx.opts.logger.error?.({ err, event: ev.type }, 'connection handler failed');
          this.abort({ condition: 'amqp:internal-error', description: 'internal error' });
          return false;
        }
        if (this.ended) return false;
      }
    }
    if (this.engine.state === 'closed') {
      this.flush();
      this.finish();
      return false;
    }
    return true;
  }

  private onEvent(ev: EngineEvent): void {
    switch (ev.type) {
      case 'sasl-outcome':
        if (ev.ok && ev.mechanism === 'PLAIN') this.user = ev.identity?.username;
        return;
      case 'remote-open':
        this.containerId = ev.open.containerId;
        if (this.refuse === undefined && !this.ctx.backend.serving) {
          this.refuse = {
            condition: 'amqp:connection:forced',
            description: this.ctx.backend.notServingReason ?? 'not serving',
          };
        }
        if (this.refuse !== undefined) {
          this.engine.close(this.refuse);
        }
        return;
      case 'protocol-error':
        this.ctx.counters.protocolErrors++;
        this.ctx.opts.logger.debug?.(
          { containerId: this.containerId, scope: ev.scope, error: ev.error },
          'protocol error',
        );
        return;
      case 'attach-request':
        this.onAttach(ev.link, ev.attach);
        return;
      case 'link-detached':
      case 'link-attached': {
        if (ev.type === 'link-attached') return;
        const h = ev.link.context as LinkHandler | undefined;
        // detach with closed=false suspends the link: its owner may come back (a temporary queue
        // waits for it); closed=true also ends a durable subscription, unless it answers a closing
        // detach of ours (a stolen link, or a link error of ours): no decision of the client's, so
        // a loss like any other (after a steal the successor holds what the link held)
        if (h) this.dropHandler(h, ev.closed && ev.byPeer ? 'detached' : 'lost');
        return;
      }
      case 'session-end':
        for (const l of ev.session.activeLinks()) {
          const h = l.context as LinkHandler | undefined;
          if (h) this.dropHandler(h, 'closed');
        }
        return;
      case 'remote-close':
        this.closedByPeer = true;
        return;
      case 'link-credit': {
        const h = ev.link.context;
        if (h instanceof ConsumerLink || h instanceof BrowserLink) h.onCredit();
        return;
      }
      case 'message': {
        const h = ev.link.context;
        if (h instanceof PublisherLink || h instanceof CoordinatorLink || h instanceof ManagementRequestLink)
          h.onMessage(ev.delivery);
        return;
      }
      case 'delivery-update': {
        const d = ev.delivery;
        if (d instanceof OutgoingDelivery) {
          const h = d.link.context;
          if (h instanceof ConsumerLink || h instanceof BrowserLink) h.onUpdate(d);
        }
        return;
      }
      case 'closed':
        this.flush();
        this.finish();
        return;
      default:
        return;
    }
  }

  private onAttach(link: Link, attach: Attach): void {
    if (this.refuse !== undefined) {
      link.refuse({ condition: 'amqp:connection:forced', description: this.refuse.description ?? 'closing' });
      return;
    }
    const o = this.ctx.opts;
    if (this.handlers.size >= o.maxLinksPerConnection) {
      link.refuse({
        condition: 'amqp:resource-limit-exceeded',
        description: `too many links on this connection (limit ${o.maxLinksPerConnection})`,
      });
      return;
    }
    if (link.role === 'receiver') attachPublisher(this, link as ReceiverLink, attach);
    else attachConsumer(this, link as SenderLink, attach);
  }

  /**
   * @internal a link handler was created (attach.ts): it is closed with the connection. `gone`:
   * the link is attached to a dynamic node, told how the link went.
   */
  addHandler(h: LinkHandler, gone?: (how: LinkGone) => void): void {
    this.handlers.set(h, gone);
  }
}
