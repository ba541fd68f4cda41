/**
 * The broker's monitoring HTTP server (docs/monitoring.md): JSON API, Prometheus metrics, health
 * probes and the status page. It reads the broker's counters, its connections, the replicated
 * state's queues and the cluster facts its embedder passes in; the one thing it changes is queues,
 * through the queue administration, under the rules of queue-changes.ts.
 *
 * `/healthz` and `/readyz` are always open (probes carry no credentials); everything else asks
 * for HTTP basic credentials when the broker has users and must name us in `Host`. Connections,
 * header and idle time are bounded (http-limits.ts, docs/security.md#http-port).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sharedInterval } from '../../common/shared-interval.js';
import type { AuthThrottleOptions } from '../server/auth-throttle.js';
import type { BrokerLogger } from '../server/options.js';
import type { Permissions } from '../server/permission-check.js';
import { statusOfAdminError } from '../server/queue-admin-errors.js';
import type { UserTable } from '../server/users.js';
import {
  basicAuthenticator,
  basicUserVerifier,
  type HttpAuthenticator,
  type HttpUserVerifier,
} from './basic-auth.js';
import { withClientCounts } from './client-counts.js';
import { type HttpLimits, hostAllowed, hostOfHeader, resolveHttpLimits } from './http-limits.js';
import { BrokerMetrics } from './metrics.js';
import type { MonitoredBroker } from './monitored-broker.js';
import { loadPageAssets, type PageAsset } from './page-assets.js';
import { answerQueueChange, type QueueRoute, queueRoute } from './queue-changes.js';
import { QueueHistory, SAMPLE_EVERY_MS } from './queue-history.js';
import type { ClusterSource, FederationDocument, Overview, QueuesDocument } from './types.js';

export interface MonitoringServerOptions {
  broker: MonitoredBroker;
  cluster: ClusterSource;
  /** Default 127.0.0.1. */
  host?: string;
  /** 0 = a free port. */
  port: number;
  /** When set, the API and page require HTTP basic credentials of one of these users. */
  users?: UserTable;
  /** With users: only those granted `"monitor": true` here (absent: every user). */
  permissions?: Permissions;
  logger?: BrokerLogger;
  /** The broker's federation links (`/api/federation`); absent: none. */
  federation?: () => FederationDocument['links'];
  /** Connection cap and deadlines (defaults in `DEFAULT_HTTP_LIMITS`; checked by `resolveHttpLimits`). */
  limits?: HttpLimits;
  /**
   * Host names (as in the `Host` header, without port) served besides IP addresses, `localhost`
   * and the bound host: the names a browser or scraper uses to reach this port.
   */
  allowedHosts?: readonly string[];
  /** Delay of failed basic-auth attempts per source address (the broker's `authThrottle`). */
  authThrottle?: AuthThrottleOptions;
}

export class MonitoringServer {
  private readonly http: Server;
  private readonly startedAt = Date.now();
  private readonly history: QueueHistory;
  private readonly metrics: BrokerMetrics;
  private readonly page: Map<string, PageAsset>;
  private readonly verifyUser: HttpUserVerifier | undefined;
  private readonly authenticate: HttpAuthenticator;
  private readonly allowedHosts: ReadonlySet<string>;
  private stopSampler: (() => void) | undefined;
  private boundPort = 0;

  private constructor(private readonly opts: MonitoringServerOptions) {
    this.history = new QueueHistory(() => opts.broker.queueRows());
    this.metrics = new BrokerMetrics(opts.broker, opts.cluster);
    this.page = loadPageAssets();
    // one verifier (one failed-guess throttle) for reading and for changes
    this.verifyUser = opts.users && basicUserVerifier(opts.users, opts.authThrottle);
    this.authenticate = basicAuthenticator(this.verifyUser, opts.permissions);
    this.allowedHosts = new Set((opts.allowedHosts ?? []).map((h) => h.toLowerCase()));
    const limits = resolveHttpLimits(opts.limits);
    this.http = createServer(
      {
        headersTimeout: limits.headersTimeoutMs,
        requestTimeout: limits.requestTimeoutMs,
        // node checks both deadlines only this often (default 30 s)
        connectionsCheckingInterval: Math.min(1_000, limits.headersTimeoutMs),
      },
      (req, res) => {
        this.handle(req, res).catch((err: unknown) => {
          opts.logger?.error?.({ err, url: req.url }, 'monitoring request failed');
          if (!res.headersSent) send(res, 500, 'text/plain; charset=utf-8', 'internal error\n');
          else res.destroy();
        });
      },
    );
    // beyond the cap node closes a socket as soon as it is accepted: its descriptor is freed at once
    this.http.maxConnections = limits.maxConnections;
    // a socket that sends nothing at all (not even a request line) is closed too
    this.http.setTimeout(limits.idleTimeoutMs, (socket) => socket.destroy());
    this.http.on('drop', (d) =>
      opts.logger?.warn?.(
        { address: d?.remoteAddress, limit: limits.maxConnections },
        'monitoring connection refused: connection cap',
      ),
    );
    // probes and scrapers reconnect; never let an idle keep-alive socket hold a stop
    this.http.keepAliveTimeout = 5000;
  }

  static async start(opts: MonitoringServerOptions): Promise<MonitoringServer> {
    const s = new MonitoringServer(opts);
    await new Promise<void>((resolve, reject) => {
      s.http.once('error', reject);
      s.http.listen(opts.port, opts.host ?? '127.0.0.1', () => {
        s.http.off('error', reject);
        resolve();
      });
    });
    s.boundPort = (s.http.address() as AddressInfo).port;
    // on the process's one 1 s timer (the server's sweep and disk alarm run there too)
    s.stopSampler = sharedInterval(SAMPLE_EVERY_MS, () => s.sampleHistory(), { ref: false });
    return s;
  }

  get port(): number {
    return this.boundPort;
  }

  get url(): string {
    const h = this.opts.host ?? '127.0.0.1';
    const host = h === '0.0.0.0' || h === '::' ? '127.0.0.1' : h.includes(':') ? `[${h}]` : h;
    return `http://${host}:${this.boundPort}`;
  }

  overview(): Overview {
    const status = this.opts.cluster.status();
    const { connections, consumers } = this.opts.broker.server.stats();
    return {
      ...status,
      queues: this.opts.broker.queueRows().length,
      ...withClientCounts(status, { connections, consumers }),
      uptimeSeconds: Math.floor((Date.now() - this.startedAt) / 1000),
    };
  }

  queues(): QueuesDocument {
    return {
      queues: this.opts.broker.queueRows().map((q) => {
        const [publishRate, deliverRate] = this.history.rates(q.name);
        const { name, messages, bytes, consumers, unacknowledged } = q;
        return { name, messages, bytes, consumers, unacknowledged, publishRate, deliverRate };
      }),
      topics: this.opts.broker.topicRows(),
    };
  }

  /** `GET /api/queues/NAME`: one queue as administration describes it. */
  private queueDocument(res: ServerResponse, route: QueueRoute): void {
    if (route.kind !== 'queue') {
      json(res, { error: route.kind === 'bad' ? route.reason : 'GET a queue: /api/queues/NAME' }, 404);
      return;
    }
    try {
      json(res, this.opts.broker.server.queueAdmin().getQueue(route.name));
    } catch (err) {
      const failed = statusOfAdminError(err);
      if (failed === undefined) throw err;
      json(res, { error: failed.reason }, failed.status);
    }
  }

  private sampleHistory(): void {
    try {
      this.history.sample(Date.now());
    } catch (err) {
      // a cluster member binds HTTP before its replicated state is attached: nothing to sample yet
      this.opts.logger?.debug?.({ err }, 'monitoring: queue sample skipped');
    }
  }

  async stop(): Promise<void> {
    this.stopSampler?.();
    await new Promise<void>((resolve) => {
      this.http.close(() => resolve());
      this.http.closeAllConnections();
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0]!;
    const route = queueRoute(path);
    const reading = req.method === 'GET' || req.method === 'HEAD';
    // a method other than GET or HEAD is a change of a queue, or not allowed at all
    if (route === undefined && !reading) {
      res.setHeader('allow', 'GET, HEAD');
      send(res, 405, 'text/plain; charset=utf-8', 'method not allowed\n');
      return;
    }
    if (path === '/healthz') {
      send(res, 200, 'text/plain; charset=utf-8', 'ok\n');
      return;
    }
    if (path === '/readyz') {
      const { serving } = this.opts.cluster.status();
      send(res, serving ? 200 : 503, 'text/plain; charset=utf-8', serving ? 'ready\n' : 'not serving\n');
      return;
    }
    if (!this.forUs(req)) {
      send(res, 421, 'text/plain; charset=utf-8', 'misdirected request: unknown Host\n');
      return;
    }
    if (route !== undefined && !reading) {
      // no CORS answer ever: a preflight (OPTIONS) gets 405 like any other method (docs/security.md#http-changes)
      if (route.kind === 'bad') return json(res, { error: route.reason }, 404);
      const answer = await answerQueueChange(req, route, {
        admin: this.opts.broker.server.queueAdmin(),
        verify: this.verifyUser,
        permissions: this.opts.permissions,
      });
      if (answer.challenge) res.setHeader('www-authenticate', 'Basic realm="quorate", charset="UTF-8"');
      if (answer.status === 405)
        res.setHeader('allow', route.kind === 'queue' ? 'GET, HEAD, PUT, DELETE' : 'DELETE');
      return json(res, answer.body, answer.status);
    }
    if (!(await this.authenticate(req))) {
      res.setHeader('www-authenticate', 'Basic realm="quorate", charset="UTF-8"');
      send(res, 401, 'text/plain; charset=utf-8', 'credentials required\n');
      return;
    }
    switch (path) {
      case '/api/overview':
        return json(res, this.overview());
      case '/api/queues':
        return json(res, this.queues());
      case '/api/federation':
        return json(res, { links: this.opts.federation?.() ?? [] } satisfies FederationDocument);
      case '/api/connections':
        return json(res, { connections: this.opts.broker.server.connections() });
      case '/api/history':
        return json(res, this.history.document());
      case '/metrics':
        send(res, 200, this.metrics.contentType, await this.metrics.text());
        return;
    }
    if (route !== undefined) return this.queueDocument(res, route);
    const asset = this.page.get(path);
    if (asset) {
      send(res, 200, asset.contentType, asset.body);
      return;
    }
    send(res, 404, 'text/plain; charset=utf-8', 'not found\n');
  }

  /** The `Host` check (probes skip it: they reveal only up or ready, and kubelets set any Host). */
  private forUs(req: IncomingMessage): boolean {
    const header = req.headers.host;
    // HTTP/1.0 without Host: no browser sends that, so no rebinding either
    if (header === undefined) return true;
    const host = hostOfHeader(header);
    return host !== undefined && hostAllowed(host, this.opts.host ?? '127.0.0.1', this.allowedHosts);
  }
}

function json(res: ServerResponse, body: unknown, status = 200): void {
  send(res, status, 'application/json; charset=utf-8', JSON.stringify(body));
}

function send(res: ServerResponse, status: number, contentType: string, body: string | Buffer): void {
  res.statusCode = status;
  res.setHeader('content-type', contentType);
  res.setHeader('cache-control', 'no-store');
  res.setHeader('content-length', Buffer.byteLength(body));
  res.end(res.req.method === 'HEAD' ? undefined : body);
}
