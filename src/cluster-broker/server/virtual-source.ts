/**
 * Virtual sources: addresses served by code instead of a queue (the cluster serves its
 * membership feed at `$cluster/membership` this way). A receiver attaching to a registered address
 * gets a link whose messages the provider pushes; they are sent pre-settled (no acknowledgement,
 * nothing stored). Messages pushed while the receiver has no credit wait on the link, in order.
 */
import type { AmqpErrorBody } from '../../codec/index.js';

/** What a provider pushes into: one per attached receiver link. */
export interface VirtualSourceSink {
  /** Send one encoded AMQP message (e.g. `encodeMessage({ body })`), pre-settled. */
  send(message: Uint8Array): void;
  /** Detach the link (closed), optionally with an error. */
  close(error?: AmqpErrorBody): void;
  /** False once the link or its connection is gone (further sends are dropped). */
  readonly open: boolean;
}

/** Who attached to a {@link VirtualSource}. */
export interface VirtualSourceAttach {
  /** The source address attached to. */
  address: string;
  /** The client's container-id. */
  containerId: string;
  /** The link's name. */
  linkName: string;
}

/** A source address served by code instead of a queue (e.g. the membership feed); messages go out pre-settled. */
export interface VirtualSource {
  /**
   * A receiver attached to this source's address (the link is already accepted). Push the
   * current state at once if the feed has one. The returned function is called once when the
   * link or its connection goes away.
   */
  subscribe(sink: VirtualSourceSink, attach: VirtualSourceAttach): () => void;
}
