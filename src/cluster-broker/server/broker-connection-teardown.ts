/**
 * BrokerConnection's teardown (broker-connection.ts): closing with an error, the socket going
 * away, failures of a submit or of our own code, and on every end the release of the link handlers
 * and the rollback of open transactions.
 */
import type { AmqpErrorBody } from '../../codec/index.js';
import { BrokerConnectionFields } from './broker-connection-fields.js';
import type { LinkGone } from './dynamic-nodes.js';
import type { LinkHandler } from './link-host.js';

export abstract class BrokerConnectionTeardown extends BrokerConnectionFields {
  /** Close with an error (not serving, shutdown). */
  close(error: AmqpErrorBody): void {
    if (this.ended) return;
    if (this.engine.state === 'open' || this.engine.state === 'opening') {
      this.closeSent = true;
      this.engine.close(error);
      this.process();
      this.flush();
      this.finish();
    } else {
      this.abort(error);
    }
  }

  /** The socket is gone (peer reset, our end): release everything. */
  socketClosed(): void {
    if (this.ended) return;
    this.ended = true;
    this.gone.abort();
    this.driver.stop();
    this.releaseAll('lost');
  }

  fail(cause: unknown): void {
    const description =
      cause instanceof Error && 'description' in cause && typeof cause.description === 'string'
        ? cause.description
        : `outcome unknown: ${String(cause)}`;
    this.ctx.opts.logger.warn?.(
      { containerId: this.containerId, err: cause },
      'closing connection: outcome unknown',
    );
    this.close({ condition: 'amqp:connection:forced', description });
  }

  internalError(err: unknown): void {
    this.ctx.opts.logger.error?.({ err, containerId: this.containerId }, 'connection handler failed');
    try {
      this.abort({ condition: 'amqp:internal-error', description: 'internal error' });
    } catch {
      // the engine itself is in trouble: drop the socket without a Close
      this.ended = true;
      this.gone.abort();
      this.driver.stop();
      this.releaseAll('lost');
      this.io.end();
    }
  }

  /** Stop without waiting for the peer: flush what we have, end the socket. */
  protected abort(error: AmqpErrorBody): void {
    if (this.ended) return;
    this.closeSent = true;
    this.engine.close(error);
    this.flush();
    this.finish();
  }

  protected finish(): void {
    if (this.ended) return;
    this.ended = true;
    this.gone.abort();
    this.driver.stop();
    // a Close the client sent first ends its links on purpose; anything else may be a failover
    this.releaseAll(this.closedByPeer && !this.closeSent ? 'closed' : 'lost');
    this.io.end();
  }

  private releaseAll(how: LinkGone): void {
    this.writableWaiters = [];
    const hs = [...this.handlers];
    this.handlers.clear();
    for (const [h, gone] of hs) {
      h.close();
      gone?.(how);
    }
    // undischarged transactions roll back (their acquisitions were released with their links)
    this.transactions.rollbackAll();
  }

  /** A link went away: its handler releases what it holds; a dynamic node learns how. */
  protected dropHandler(h: LinkHandler, how: LinkGone): void {
    const gone = this.handlers.get(h);
    if (!this.handlers.delete(h)) {
      h.close();
      return;
    }
    h.close();
    gone?.(how);
  }

  /** Write the engine's output now (ending the socket once the engine closed). */
  protected flush(): void {
    this.driver.flush();
  }
}
