/**
 * The `/management` node (docs/management.md): RabbitMQ 4's HTTP-over-AMQP management. A client
 * attaches a pair of links with one name: a sender with target `/management` (its requests; our
 * receiver, a ManagementRequestLink) and a receiver with source `/management` (our replies, sent
 * pre-settled on a VirtualLink). A request with `reply-to` `$me` is answered on the paired
 * receiver, in request order; the answer is computed by management-requests.ts.
 */
import {
  type Attach,
  decodeMessage,
  encodeMessage,
  type Message,
  type Source,
  type Target,
} from '../../codec/index.js';
import type { IncomingDelivery, ReceiverLink, SenderLink } from '../../protocol/index.js';
import {
  HTTP_RESPONSE_PROPERTY,
  HTTP_VERSION,
  MANAGEMENT_ADDRESS,
  MANAGEMENT_PAIRED_PROPERTY,
  MANAGEMENT_REPLY_TO,
} from '../../wire-extensions.js';
import type { BrokerConnection } from './broker-connection.js';
import type { LinkHandler, LinkHost } from './link-host.js';
import { answerManagementRequest } from './management-requests.js';
import { mayManage } from './permissions.js';
import { MAX_WAITING_FOR_CREDIT, VirtualLink } from './virtual-link.js';

/** Request credit granted at a time (requests are answered one after another). */
const REQUEST_CREDIT = 100;

/** The reply links of each connection, by link name (the pair shares the name). */
const replyLinks = new WeakMap<LinkHost, Map<string, VirtualLink>>();

/** Is `address` the management node's? */
export function isManagementAddress(address: unknown): boolean {
  return address === MANAGEMENT_ADDRESS;
}

/** The link properties of our half of the pair (RabbitMQ's clients look for `paired`). */
const PAIRED = { [MANAGEMENT_PAIRED_PROPERTY]: true };

/** The client's sender to `/management`: our receiver of requests. */
export function attachManagementRequests(conn: BrokerConnection, link: ReceiverLink, attach: Attach): void {
  const h = new ManagementRequestLink(conn, link);
  link.context = h;
  conn.addHandler(h);
  link.accept({
    source: attach.source ?? {},
    target: { address: MANAGEMENT_ADDRESS },
    sndSettleMode: attach.sndSettleMode === 1 ? 1 : 2,
    rcvSettleMode: 0,
    properties: PAIRED,
  });
  link.flow(REQUEST_CREDIT);
}

/** The client's receiver from `/management`: our sender of replies. */
export function attachManagementReplies(conn: BrokerConnection, link: SenderLink, attach: Attach): void {
  const h = new VirtualLink(conn, link);
  link.context = h;
  conn.addHandler(h);
  const t = attach.target;
  link.accept({
    source: { address: MANAGEMENT_ADDRESS } satisfies Source,
    target: t === undefined || 'coordinator' in t ? {} : (t as Target),
    sndSettleMode: 1,
    rcvSettleMode: 0,
    properties: PAIRED,
  });
  const name = link.name;
  h.start(
    {
      subscribe(sink) {
        let links = replyLinks.get(conn);
        if (links === undefined) {
          links = new Map();
          replyLinks.set(conn, links);
        }
        links.set(name, h);
        return () => {
          if (links.get(name) === sink) links.delete(name);
        };
      },
    },
    MANAGEMENT_ADDRESS,
  );
}

/** Requests in, answered in order on the paired reply link. */
export class ManagementRequestLink implements LinkHandler {
  private closed = false;
  /** The answer being computed: the next request waits for it (replies keep request order). */
  private previous: Promise<void> = Promise.resolve();
  /** Requests taken whose reply is not yet sent on the reply link. */
  private computing = 0;

  constructor(
    private readonly host: LinkHost,
    private readonly link: ReceiverLink,
  ) {}

  close(): void {
    this.closed = true;
  }

  onMessage(d: IncomingDelivery): void {
    if (this.link.credit < REQUEST_CREDIT / 2) this.link.flow(REQUEST_CREDIT);
    let request: Message;
    try {
      request = decodeMessage(d.payload);
    } catch (err) {
      this.settle(d, { condition: 'amqp:decode-error', description: `undecodable request: ${String(err)}` });
      return;
    }
    const reply = replyLinks.get(this.host)?.get(this.link.name);
    if (request.replyTo !== MANAGEMENT_REPLY_TO || reply === undefined) {
      this.settle(d, {
        condition: 'amqp:precondition-failed',
        description: `reply-to must be ${MANAGEMENT_REPLY_TO}, with a receiver from ${MANAGEMENT_ADDRESS} of the same link name attached first`,
      });
      return;
    }
    // Replies of one link pair being computed or waiting for the reply link's credit are bounded
    // by the reply link's own bound: a request beyond is refused here, so a client that reads no
    // replies cannot make the broker hold an unbounded number (docs/management.md#back-pressure),
    // and a refused request never reaches the reply link.
    if (this.computing + reply.queued >= MAX_WAITING_FOR_CREDIT) {
      const error = {
        condition: 'amqp:resource-limit-exceeded',
        description: `${MAX_WAITING_FOR_CREDIT} replies wait for credit on the ${MANAGEMENT_ADDRESS} receiver '${this.link.name}': grant it credit`,
      };
      // a pre-settled request cannot be refused alone: nothing is dropped without a word
      if (d.remoteSettled) this.detach(error);
      else this.settle(d, error);
      return;
    }
    this.settle(d, undefined);
    this.computing++;
    const { queueAdmin: admin, opts } = this.host.ctx;
    const allowed = mayManage(opts.permissions, this.host.user);
    this.previous = this.previous
      .then(() =>
        answerManagementRequest(
          admin,
          { method: request.subject, path: request.to, body: request.body },
          allowed,
        ),
      )
      .then((answer) => {
        this.computing--;
        if (this.closed) return;
        const out: Message = {
          subject: String(answer.status),
          applicationProperties: { [HTTP_RESPONSE_PROPERTY]: HTTP_VERSION },
          body: answer.body as Message['body'],
        };
        if (request.messageId !== undefined) out.correlationId = request.messageId;
        reply.send(encodeMessage(out));
      })
      .catch((err: unknown) => this.host.internalError(err));
  }

  private detach(error: { condition: string; description: string }): void {
    if (this.link.state === 'attached') this.link.detach(error);
    this.closed = true;
    this.host.scheduleFlush();
  }

  /** Accepted, or rejected with `error`; nothing to send for a pre-settled request. */
  private settle(d: IncomingDelivery, error: { condition: string; description: string } | undefined): void {
    if (d.remoteSettled) return;
    if (error === undefined) d.accept();
    else d.reject(error);
    this.host.scheduleFlush();
  }
}
