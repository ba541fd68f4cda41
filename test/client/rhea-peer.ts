/**
 * A tiny broker on rhea (an AMQP 1.0 implementation nobody here wrote) for client tests:
 * per-address FIFO queues, competing consumers, outcomes as docs/delivery-contract.md#outcomes says
 * (accepted removes, released/modified requeue, rejected drops), unsettled deliveries requeued
 * when their link or connection goes. Every stored message is kept as the exact bytes the client
 * wrote, so tests can check message-ids and order on the wire.
 *
 * Knobs: `outcome(message)` decides the outcome of each incoming transfer ('hold' never settles:
 * for timeout / in-doubt tests); `secondMode` answers rcv-settle-mode second (else first);
 * `refuse(address)` refuses attaches; Open properties and offered capabilities are configurable.
 */
import type { AddressInfo, Server } from 'node:net';
import rhea from 'rhea';
import { decodeMessage, type Message } from '../../src/codec/public.js';

type RheaConnection = rhea.Connection;
type RheaSender = rhea.Sender;
type RheaDelivery = rhea.Delivery;

// keep the exact bytes of every decoded message (rhea's decode is called with them)
const rheaMessage = (rhea as unknown as { message: { decode(b: Buffer): object } }).message;
const originalDecode = rheaMessage.decode;
const RAW = Symbol('raw');
if (!(originalDecode as { patched?: boolean }).patched) {
  const patched = (buf: Buffer) => {
    const m = originalDecode(buf) as Record<symbol, unknown>;
    m[RAW] = Buffer.from(buf);
    return m;
  };
  (patched as { patched?: boolean }).patched = true;
  rheaMessage.decode = patched;
}

export type PeerOutcome = 'accept' | 'reject' | 'release' | 'modify' | 'hold';

export interface StoredMessage {
  bytes: Buffer;
  message: Message;
}

export interface AttachRecord {
  /** 'sender' = the client's sender (we receive on it) */
  role: 'sender' | 'receiver';
  name: string;
  address: string | undefined;
  rcvSettleMode: number | undefined;
  containerId: string;
  connection: RheaConnection;
}

export interface RheaPeerOptions {
  port?: number;
  outcome?: (m: StoredMessage, address: string) => PeerOutcome;
  secondMode?: boolean;
  refuse?: (address: string | undefined, role: 'sender' | 'receiver') => boolean;
  openProperties?: Record<string, unknown>;
  offeredCapabilities?: string[];
  /** how long the peer declares as its idle timeout (ms); default none */
  idleTimeoutMs?: number;
  /** Answer every Open with Open then Close carrying this error (e.g. not quorate). */
  closeOnOpen?: { condition: string; description?: string };
  /** SASL PLAIN only, with these users (no ANONYMOUS) */
  plainUsers?: Record<string, string>;
  /** listen with TLS (amqps) */
  tls?: { key: string; cert: string };
}

export interface RheaPeer {
  readonly port: number;
  readonly url: string;
  /** Every message received from clients, in arrival order (with its address). */
  readonly received: { address: string; m: StoredMessage }[];
  readonly attaches: AttachRecord[];
  readonly connections: Set<RheaConnection>;
  /** Users that passed SASL PLAIN. */
  readonly users: string[];
  /** Detach every link of the client's senders with this error (closed false: a forced detach). */
  detachClientSenders(error: { condition: string; description?: string }): void;
  /** Held (outcome 'hold') incoming deliveries, settle them by hand. */
  readonly held: { delivery: RheaDelivery; m: StoredMessage }[];
  queue(address: string): StoredMessage[];
  /** Put a message on a queue (as if a producer sent it). */
  enqueue(address: string, m: StoredMessage): void;
  /** Credit the client's receivers currently give us, per link name. */
  credit(linkName: string): number;
  /** Drop every client connection at the socket (no Close), keep listening. */
  killConnections(): void;
  /** Close the listener and drop all connections. */
  stop(): Promise<void>;
}

export function stored(message: Message, bytes?: Uint8Array): StoredMessage {
  return { message, bytes: Buffer.from(bytes ?? new Uint8Array()) };
}

export async function startRheaPeer(opts: RheaPeerOptions = {}): Promise<RheaPeer> {
  const container = rhea.create_container({
    id: `rhea-peer-${Math.random().toString(16).slice(2)}`,
    autoaccept: false,
    treat_modified_as_released: false,
  } as rhea.ContainerOptions);
  const queues = new Map<string, StoredMessage[]>();
  const senders = new Map<string, Set<RheaSender>>();
  const received: { address: string; m: StoredMessage }[] = [];
  const attaches: AttachRecord[] = [];
  const connections = new Set<RheaConnection>();
  const held: { delivery: RheaDelivery; m: StoredMessage }[] = [];
  const inFlight = new Map<RheaDelivery, { address: string; m: StoredMessage }>();
  const users: string[] = [];
  const clientSenders = new Set<rhea.Receiver>();
  if (opts.plainUsers) {
    const table = opts.plainUsers;
    (
      container as unknown as {
        sasl_server_mechanisms: { enable_plain(cb: (u: string, p: string) => boolean): void };
      }
    ).sasl_server_mechanisms.enable_plain((u, pw) => {
      const ok = table[u] === pw;
      if (ok) users.push(u);
      return ok;
    });
  }

  const q = (address: string) => {
    let x = queues.get(address);
    if (!x) {
      x = [];
      queues.set(address, x);
    }
    return x;
  };
  const pump = (address: string) => {
    const list = q(address);
    for (const s of senders.get(address) ?? []) {
      // rhea takes credit only when its session writes a delivery (later): count our unwritten ones
      const outgoing = (s as unknown as { session: { outgoing: { next_pending_delivery: number } } }).session
        .outgoing;
      let unwritten = 0;
      for (const [d] of inFlight) {
        const dd = d as unknown as { link: unknown; id: number };
        if (dd.link === s && dd.id >= outgoing.next_pending_delivery) unwritten++;
      }
      while (list.length > 0 && s.sendable() && creditOf(s) - unwritten > 0) {
        unwritten++;
        const m = list.shift()!;
        const d = (s as unknown as { send(b: Buffer, tag: undefined, format: number): RheaDelivery }).send(
          m.bytes,
          undefined,
          0,
        );
        inFlight.set(d, { address, m });
      }
    }
  };
  const requeue = (d: RheaDelivery, front = true) => {
    const f = inFlight.get(d);
    if (!f) return;
    inFlight.delete(d);
    if (front) q(f.address).unshift(f.m);
    else q(f.address).push(f.m);
    pump(f.address);
  };
  const settleOutgoing = (d: RheaDelivery) => {
    const dd = d as unknown as { remote_settled: boolean; update(settled: boolean): void };
    if (!dd.remote_settled) dd.update(true);
  };

  container.on('connection_open', (ctx: rhea.EventContext) => {
    connections.add(ctx.connection);
    if (opts.closeOnOpen) ctx.connection.close(opts.closeOnOpen);
  });
  container.on('disconnected', (ctx: rhea.EventContext) => {
    connections.delete(ctx.connection);
    for (const [d, _] of [...inFlight]) {
      if ((d as unknown as { link: { connection: RheaConnection } }).link.connection === ctx.connection)
        requeue(d);
    }
    for (const set of senders.values()) {
      for (const s of set) if (s.connection === ctx.connection) set.delete(s);
    }
  });
  container.on('connection_close', (ctx: rhea.EventContext) => {
    connections.delete(ctx.connection);
  });
  container.on('receiver_open', (ctx: rhea.EventContext) => {
    const r = ctx.receiver!;
    const address = (r as unknown as { remote: { attach?: { target?: { address?: string } } } }).remote.attach
      ?.target?.address;
    attaches.push({
      role: 'sender',
      name: r.name,
      address,
      rcvSettleMode: undefined,
      containerId: ctx.connection.container_id ?? '',
      connection: ctx.connection,
    });
    if (opts.refuse?.(address, 'sender')) {
      r.close({ condition: 'amqp:not-found', description: `no such node ${address}` });
      return;
    }
    r.set_target({ address: address ?? '' });
    clientSenders.add(r);
  });
  container.on('sender_open', (ctx: rhea.EventContext) => {
    const s = ctx.sender!;
    const remote = (
      s as unknown as { remote: { attach?: { source?: { address?: string }; rcv_settle_mode?: number } } }
    ).remote.attach;
    const address = remote?.source?.address;
    attaches.push({
      role: 'receiver',
      name: s.name,
      address,
      rcvSettleMode: remote?.rcv_settle_mode,
      containerId: ctx.connection.container_id ?? '',
      connection: ctx.connection,
    });
    if (opts.refuse?.(address, 'receiver')) {
      s.close({ condition: 'amqp:not-found', description: `no such node ${address}` });
      return;
    }
    s.set_source({ address: address ?? '' });
    const local = (s as unknown as { local: { attach: { rcv_settle_mode?: number } } }).local.attach;
    local.rcv_settle_mode = opts.secondMode && remote?.rcv_settle_mode === 1 ? 1 : 0;
    if (address !== undefined) {
      let set = senders.get(address);
      if (!set) {
        set = new Set();
        senders.set(address, set);
      }
      set.add(s);
    }
  });
  container.on('sendable', (ctx: rhea.EventContext) => {
    const address = ctx.sender?.source?.address;
    if (address) pump(address);
  });
  const closeLink = (ctx: rhea.EventContext) => {
    const s = ctx.sender;
    if (!s) return;
    for (const set of senders.values()) set.delete(s);
    for (const [d] of [...inFlight]) if ((d as unknown as { link: unknown }).link === s) requeue(d);
  };
  container.on('sender_close', closeLink);
  container.on('accepted', (ctx: rhea.EventContext) => {
    inFlight.delete(ctx.delivery!);
    settleOutgoing(ctx.delivery!);
  });
  container.on('rejected', (ctx: rhea.EventContext) => {
    inFlight.delete(ctx.delivery!);
    settleOutgoing(ctx.delivery!);
  });
  container.on('released', (ctx: rhea.EventContext) => {
    settleOutgoing(ctx.delivery!);
    requeue(ctx.delivery!);
  });
  container.on('modified', (ctx: rhea.EventContext) => {
    settleOutgoing(ctx.delivery!);
    const f = inFlight.get(ctx.delivery!);
    const state = (ctx.delivery as unknown as { remote_state?: { undeliverable_here?: boolean } })
      .remote_state;
    if (f && state?.undeliverable_here) {
      inFlight.delete(ctx.delivery!);
      return; // a tiny broker: drop it rather than track per-link exclusion
    }
    requeue(ctx.delivery!);
  });
  container.on('message', (ctx: rhea.EventContext) => {
    const raw = (ctx.message as unknown as Record<symbol, Buffer>)[RAW]!;
    const address = ctx.receiver?.target?.address ?? '';
    const m: StoredMessage = { bytes: raw, message: decodeMessage(raw) };
    received.push({ address, m });
    const outcome = opts.outcome?.(m, address) ?? 'accept';
    const d = ctx.delivery!;
    switch (outcome) {
      case 'accept':
        q(address).push(m);
        d.accept();
        pump(address);
        return;
      case 'reject':
        d.reject({ condition: 'amqp:precondition-failed', description: 'rejected by test peer' });
        return;
      case 'release':
        d.release();
        return;
      case 'modify':
        d.modified({ delivery_failed: true, undeliverable_here: true });
        return;
      case 'hold':
        held.push({ delivery: d, m });
        return;
    }
  });
  // keep rhea from throwing on unhandled errors in tests
  container.on('error', () => undefined);
  container.on('connection_error', () => undefined);

  const listenOpts: Record<string, unknown> = { port: opts.port ?? 0, host: '127.0.0.1' };
  if (opts.openProperties) listenOpts.properties = opts.openProperties;
  if (opts.offeredCapabilities) listenOpts.offered_capabilities = opts.offeredCapabilities;
  if (opts.idleTimeoutMs) listenOpts.idle_time_out = opts.idleTimeoutMs;
  if (opts.tls) {
    listenOpts.transport = 'tls';
    listenOpts.key = opts.tls.key;
    listenOpts.cert = opts.tls.cert;
  }
  const server = container.listen(listenOpts as unknown as rhea.ServerConnectionOptions) as unknown as Server;
  await new Promise<void>((resolve, reject) => {
    server.once('listening', () => resolve());
    server.once('error', reject);
  });
  const port = (server.address() as AddressInfo).port;
  const sockets = () =>
    [...connections].map((c) => (c as unknown as { socket?: { destroy(): void } }).socket).filter((s) => !!s);

  return {
    port,
    url: `amqp://127.0.0.1:${port}`,
    received,
    attaches,
    users,
    detachClientSenders(error) {
      for (const r of clientSenders) {
        const link = r as unknown as {
          is_open(): boolean;
          local: { detach: { closed: boolean; error?: unknown } };
          detach(): void;
        };
        if (!link.is_open()) continue;
        link.local.detach.error = error;
        link.detach();
      }
      clientSenders.clear();
    },
    connections,
    held,
    queue: q,
    enqueue(address, m) {
      q(address).push(m);
      pump(address);
    },
    credit(linkName) {
      for (const set of senders.values()) for (const s of set) if (s.name === linkName) return creditOf(s);
      return 0;
    },
    killConnections() {
      for (const s of sockets()) s!.destroy();
    },
    async stop() {
      for (const s of sockets()) s!.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function creditOf(s: RheaSender): number {
  return (s as unknown as { credit: number }).credit;
}
