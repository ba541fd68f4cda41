/**
 * Client observability: the diagnostics_channel contract (docs/observability.md), conn.stats(),
 * and QUORATE_LOG. Runs against the reference broker (in process) and rhea peers we stop.
 */
import { spawn } from 'node:child_process';
import diagnosticsChannel from 'node:diagnostics_channel';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { startBroker } from '../../src/broker.js';
import { loggerFromEnv } from '../../src/client/env-logger.js';
import { hashPassword, parseHash } from '../../src/cluster-broker/server/password-hash.js';
import { type Connection, type ConnectionEvents, connect, SendError } from '../../src/index.js';
import { freePort, waitFor } from '../support/net.js';
import { type RheaPeer, type RheaPeerOptions, startRheaPeer } from './rhea-peer.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

async function peer(opts: RheaPeerOptions = {}): Promise<RheaPeer> {
  const p = await startRheaPeer(opts);
  cleanups.push(() => p.stop());
  return p;
}

async function client(urls: string | string[]): Promise<Connection> {
  const c = await connect({
    urls,
    randomizeMembers: false,
    reconnect: { initialDelayMs: 20, maxDelayMs: 200, maxTimeMs: 20_000 },
  });
  cleanups.push(() => c.close());
  return c;
}

/** Records every event of the named tracing channels and plain channels until `stop()`. */
function recordChannels(tracing: string[], plain: string[]) {
  const events: { channel: string; kind: string; context: Record<string, unknown> }[] = [];
  const undo: (() => void)[] = [];
  for (const name of tracing) {
    const on = (kind: string) => (context: object) =>
      void events.push({ channel: name, kind, context: { ...context } });
    const handlers = {
      start: on('start'),
      end: on('end'),
      asyncStart: on('asyncStart'),
      asyncEnd: on('asyncEnd'),
      error: on('error'),
    };
    const tc = diagnosticsChannel.tracingChannel(name);
    tc.subscribe(handlers);
    undo.push(() => tc.unsubscribe(handlers));
  }
  for (const name of plain) {
    const h = (m: unknown) =>
      events.push({ channel: name, kind: 'publish', context: m as Record<string, unknown> });
    diagnosticsChannel.subscribe(name, h);
    undo.push(() => diagnosticsChannel.unsubscribe(name, h));
  }
  cleanups.push(async () => {
    for (const u of undo) u();
  });
  return {
    events,
    of: (channel: string, kind: string) =>
      events.filter((e) => e.channel === channel && e.kind === kind).map((e) => e.context),
  };
}

function once<K extends keyof ConnectionEvents>(conn: Connection, name: K): Promise<ConnectionEvents[K][0]> {
  return new Promise((resolve) =>
    conn.once(name, ((info: ConnectionEvents[K][0]) => resolve(info)) as never),
  );
}

describe('diagnostics channels', () => {
  it('connect, send, receive and settle are traced with the documented context', async () => {
    const b = await startBroker({ host: '127.0.0.1', port: 0 });
    cleanups.push(() => b.stop());
    const rec = recordChannels(['quorate:connect', 'quorate:send', 'quorate:settle'], ['quorate:receive']);
    const conn = await client(b.url);
    expect(rec.of('quorate:connect', 'start')[0]).toMatchObject({
      urls: [b.url],
      containerId: conn.containerId,
    });
    expect(rec.of('quorate:connect', 'asyncEnd')[0]).toMatchObject({ url: b.url, result: conn });

    const sender = await conn.openSender('traced');
    const result = await sender.send({ messageId: 'm-1', body: 'hello' });
    const [sendStart] = rec.of('quorate:send', 'start');
    expect(sendStart).toMatchObject({ address: 'traced', messageId: 'm-1', containerId: conn.containerId });
    expect((sendStart!.message as { body: unknown }).body).toBe('hello');
    const [sendEnd] = rec.of('quorate:send', 'asyncEnd');
    expect(sendEnd).toMatchObject({ outcome: { state: 'accepted' }, result });

    const receiver = await conn.openReceiver('traced');
    const d = await receiver.receive({ timeoutMs: 10_000 });
    expect(rec.of('quorate:receive', 'publish')[0]).toMatchObject({
      address: 'traced',
      message: { messageId: 'm-1', body: 'hello' },
    });
    await d.accept();
    expect(rec.of('quorate:settle', 'start')[0]).toMatchObject({ address: 'traced', outcome: 'accepted' });
    expect(rec.of('quorate:settle', 'asyncEnd')).toHaveLength(1);
    expect(rec.of('quorate:settle', 'error')).toHaveLength(0);
  });

  it('a send start subscriber can add application properties that go on the wire', async () => {
    const p = await peer();
    const conn = await client(p.url);
    const add = (ctx: unknown) => {
      const c = ctx as { message: { applicationProperties: Record<string, unknown> } };
      c.message.applicationProperties.traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    };
    diagnosticsChannel.subscribe('tracing:quorate:send:start', add);
    cleanups.push(async () => diagnosticsChannel.unsubscribe('tracing:quorate:send:start', add));
    const sender = await conn.openSender('q');
    const original = { body: 1, applicationProperties: { kind: 'order' } };
    await sender.send(original);
    expect(p.received[0]!.m.message.applicationProperties).toEqual({
      kind: 'order',
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
    });
    expect(original.applicationProperties).toEqual({ kind: 'order' }); // the caller's object is untouched
  });

  it('a refused send ends with the outcome and the SendError in its context', async () => {
    const p = await peer({ outcome: () => 'reject' });
    const conn = await client(p.url);
    const rec = recordChannels(['quorate:send'], []);
    const sender = await conn.openSender('q');
    await expect(sender.send({ body: 1 })).rejects.toBeInstanceOf(SendError);
    const [err] = rec.of('quorate:send', 'error');
    expect(err!.error).toBeInstanceOf(SendError);
    expect(err!.outcome).toMatchObject({ state: 'rejected' });
  });

  it('failover and reconnecting are published with the event payloads and the container-id', async () => {
    const a = await peer({ outcome: () => 'hold' });
    const b2 = await peer();
    const conn = await client([a.url, b2.url]);
    const rec = recordChannels([], ['quorate:failover', 'quorate:reconnecting', 'quorate:membership']);
    const sender = await conn.openSender('orders');
    const pending = [sender.send({ body: 1 }), sender.send({ body: 2 })];
    await waitFor(() => a.received.length === 2, { timeoutMs: 10_000, what: 'A to hold 2 messages' });
    const failover = once(conn, 'failover');
    await a.stop();
    const event = await failover;
    await Promise.all(pending);
    expect(rec.of('quorate:failover', 'publish')).toEqual([{ ...event, containerId: conn.containerId }]);
    const reconnecting = rec.of('quorate:reconnecting', 'publish');
    expect(reconnecting.length).toBeGreaterThanOrEqual(1);
    expect(reconnecting[0]).toMatchObject({ attempt: 1, containerId: conn.containerId });
  });

  it('membership changes are published with the event payload', async () => {
    const other = await freePort();
    const p = await peer({
      openProperties: { 'failover-server-list': [{ 'network-host': '127.0.0.1', port: other }] },
    });
    const rec = recordChannels([], ['quorate:membership']);
    const conn = await client(p.url);
    const [m] = rec.of('quorate:membership', 'publish');
    expect(m).toMatchObject({ containerId: conn.containerId, added: [`amqp://127.0.0.1:${other}`] });
  });
});

describe('conn.stats()', () => {
  it('counts sent, accepted, resent, in flight, buffered and failovers, and names the member', async () => {
    const a = await peer({ outcome: () => 'hold' });
    const b2 = await peer();
    const conn = await client([a.url, b2.url]);
    const sender = await conn.openSender('orders');
    expect(conn.stats()).toMatchObject({ sent: 0, accepted: 0, inFlight: 0, member: a.url, failovers: 0 });
    const pending = [1, 2, 3].map((i) => sender.send({ body: i }));
    await waitFor(() => a.received.length === 3, { timeoutMs: 10_000, what: 'A to hold 3 messages' });
    const held = conn.stats();
    expect(held).toMatchObject({ sent: 3, accepted: 0, resent: 0, inFlight: 3, state: 'open' });
    expect(held.buffered.messages).toBe(3);
    expect(held.buffered.bytes).toBeGreaterThan(0);
    const failover = once(conn, 'failover');
    await a.stop();
    await failover;
    await Promise.all(pending);
    expect(conn.stats()).toMatchObject({
      sent: 3,
      accepted: 3,
      resent: 3,
      inFlight: 0,
      buffered: { messages: 0, bytes: 0 },
      failovers: 1,
      member: b2.url,
    });
  });
});

describe('QUORATE_LOG', () => {
  it('picks the levels from the environment, silent when unset', () => {
    const lines: string[] = [];
    const write = (l: string) => lines.push(l);
    expect(loggerFromEnv({}, write)).toBeUndefined();
    expect(lines).toEqual([]);
    // a typo is said once, not a silent minute
    expect(loggerFromEnv({ QUORATE_LOG: 'verbose' }, write)).toBeUndefined();
    expect(loggerFromEnv({ QUORATE_LOG: 'verbose' }, write)).toBeUndefined();
    expect(lines).toEqual([
      "quorate warn QUORATE_LOG='verbose' is not one of trace|debug|info|warn|error: logging stays off\n",
    ]);
    lines.length = 0;
    const warn = loggerFromEnv({ QUORATE_LOG: 'warn' }, write)!;
    expect(warn.isLevelEnabled?.('info')).toBe(false);
    warn.info?.({}, 'not shown');
    warn.warn?.({ n: 1n }, 'careful');
    expect(lines).toEqual(['quorate warn careful {"n":"1"}\n']);
    const debug = loggerFromEnv({ QUORATE_LOG: 'DEBUG' }, write)!;
    expect(typeof debug.debug).toBe('function');
  });

  it('QUORATE_LOG=trace prints every AMQP frame in and out, one line each, and never SASL', async () => {
    const broker = await startBroker({
      port: 0,
      users: new Map([['u', parseHash(await hashPassword('secret-pw'))]]),
    });
    cleanups.push(() => broker.stop());
    const lines: string[] = [];
    const logger = loggerFromEnv({ QUORATE_LOG: 'trace' }, (l) => lines.push(l))!;
    const conn = await connect({ urls: `amqp://u:secret-pw@127.0.0.1:${broker.port}`, logger });
    cleanups.push(() => conn.close());
    const sender = await conn.openSender('traced');
    await sender.send({ body: 'hello' });
    await conn.close();
    const frames = lines.filter((l) => /^quorate trace (->|<-) /.test(l));
    const seen = new Set(frames.map((l) => l.split(' ').slice(2, 4).join(' ')));
    expect([...seen].sort()).toEqual(
      [
        '-> attach',
        '-> begin',
        '-> close',
        // the early probe: does this peer answer echo (docs/failover.md#unresponsive)
        '-> flow',
        '-> open',
        '-> transfer',
        '<- attach',
        '<- begin',
        '<- close',
        '<- disposition',
        '<- flow',
        '<- open',
      ].sort(),
    );
    const transfer = frames.find((l) => l.startsWith('quorate trace -> transfer '));
    expect(transfer).toMatch(/"payloadBytes":\d+/);
    expect(frames.some((l) => l.startsWith('quorate trace <- disposition '))).toBe(true);
    expect(lines.join('')).not.toContain('secret-pw');
    // one line per frame
    for (const l of lines) expect(l.indexOf('\n')).toBe(l.length - 1);
  });

  it('a logger whose trace level is off (pino at info) is never asked per frame', async () => {
    const broker = await startBroker({ port: 0 });
    cleanups.push(() => broker.stop());
    let traced = 0;
    const logger = { trace: () => void traced++, isLevelEnabled: (l: string) => l !== 'trace' };
    const conn = await connect({ urls: `amqp://127.0.0.1:${broker.port}`, logger });
    cleanups.push(() => conn.close());
    await (await conn.openSender('untraced')).send({ body: 1 });
    await conn.close();
    expect(traced).toBe(0);
  });

  it('with QUORATE_LOG=info and no logger, every failed attempt is on stderr with its cause', async () => {
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'quorate-log-'));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    const index = fileURLToPath(new URL('../../src/index.ts', import.meta.url));
    const script = join(dir, 'connect.mts');
    writeFileSync(
      script,
      `import { connect } from ${JSON.stringify(index)};
await connect({ urls: 'amqp://127.0.0.1:${port}', waitOnFirstConnect: true, reconnect: { maxAttempts: 3, initialDelayMs: 10 } })
  .catch((e) => process.stdout.write(e.condition));\n`,
    );
    const child = spawn(process.execPath, ['--import', 'tsx', script], {
      env: { ...process.env, QUORATE_LOG: 'info' },
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const code = await new Promise((r) => child.on('close', r));
    expect(code).toBe(0);
    expect(stdout).toBe('quorate:reconnect-exhausted');
    const attempts = stderr.split('\n').filter((l) => l.startsWith('quorate info connection attempt'));
    expect(attempts).toHaveLength(3);
    for (const [i, line] of attempts.entries()) {
      expect(line).toContain(`attempt ${i + 1} to amqp://127.0.0.1:${port} failed`);
      expect(line).toContain('ECONNREFUSED');
    }
  });
});
