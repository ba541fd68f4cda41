/**
 * The attack of issue 31 on the monitoring port, end to end (docs/security.md#http-port): a
 * `quorate-broker` process with few file descriptors is flooded with more half-sent HTTP requests
 * (no credentials) than it has descriptors. Without a connection cap each of them holds one
 * until the header deadline: new AMQP clients cannot be accepted and the store cannot open its
 * next file. With the cap the AMQP port keeps serving: a new client connects, sends durable
 * messages (each acknowledged after the store's fsync) and receives them, and the process lives
 * on and stops cleanly.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createConnection, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import {
  closeConnection,
  connect,
  sendAll,
  TestReceiver,
} from '../../../cluster-broker/server/rhea-client.js';
import { awaitBrokerReady, type BrokerProcess } from '../../../support/broker-process.js';

const ROOT = new URL('../../../..', import.meta.url).pathname;
const ENTRY = 'src/cluster-broker/cli/main.ts';
/** The broker's descriptor limit: what node, tsx, the store and a few clients need, with room. */
const FD_LIMIT = 256;
/** More half-sent requests than the broker has descriptors. */
const FLOOD = FD_LIMIT * 2;
const MESSAGES = 20;
/** For steps that take milliseconds when the broker is healthy (a starved one never answers). */
const STEP_DEADLINE_MS = 15_000;

let dir: string | undefined;
let broker: BrokerProcess | undefined;
const flood: Socket[] = [];

afterAll(async () => {
  for (const s of flood) s.destroy();
  if (broker && broker.child.exitCode === null && broker.child.signalCode === null) {
    broker.child.kill('SIGKILL');
    await broker.exited;
  }
  if (dir) await rm(dir, { recursive: true, force: true });
});

function withDeadline<T>(what: string, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what}: no answer within ${STEP_DEADLINE_MS} ms`)),
      STEP_DEADLINE_MS,
    );
  });
  return Promise.race([p, deadline]).finally(() => clearTimeout(timer));
}

/** The broker CLI under `ulimit -n` (soft and hard), so its own limit is what the flood meets. */
function spawnLimited(args: string[]): ChildProcess {
  // the command comes as bash's positional parameters: no quoting of paths
  const command = [process.execPath, '--import', 'tsx', ENTRY, ...args];
  return spawn('bash', ['-c', `ulimit -n ${FD_LIMIT} && exec "$@"`, 'bash', ...command], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Opens one connection and sends a request line and one header, never the blank line ending them. */
function halfSentRequest(port: number): Promise<void> {
  return new Promise((resolve) => {
    const s = createConnection({ host: '127.0.0.1', port });
    flood.push(s);
    s.on('connect', () => {
      s.write('GET /api/overview HTTP/1.1\r\nHost: 127.0.0.1\r\n');
      resolve();
    });
    // a connection refused or reset is the server defending itself
    s.on('error', () => resolve());
    s.resume();
  });
}

/** A whole request on a new connection; resolves when it is closed, answered or not. */
function lastInLine(port: number): Promise<void> {
  return new Promise((resolve) => {
    const s = createConnection({ host: '127.0.0.1', port }, () =>
      s.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n'),
    );
    s.on('error', () => {});
    s.on('close', () => resolve());
    s.resume();
  });
}

it('half-sent HTTP requests beyond the descriptor limit leave AMQP and the store working', async () => {
  dir = await mkdtemp(join(tmpdir(), 'qb-http-flood-'));
  broker = await awaitBrokerReady(
    spawnLimited(['--port', '0', '--http-port', '0', '--data-dir', dir, '--log-level', 'warn']),
    30_000,
  );
  const httpPort = broker.httpPort!;
  expect(httpPort).toBeGreaterThan(0);

  await Promise.all(Array.from({ length: FLOOD }, () => halfSentRequest(httpPort)));
  // connections are accepted in order: once one opened after the flood is answered or closed,
  // the broker has taken in (and kept or shed) every connection of the flood
  await withDeadline('the broker taking in the flood', lastInLine(httpPort));

  // a new client during the flood: connects, its durable messages are acknowledged, it gets them back
  const conn = await withDeadline('AMQP connect during the flood', connect({ port: broker.port }));
  const bodies = Array.from({ length: MESSAGES }, (_, i) => `m-${i}`);
  const outcomes = await withDeadline(
    'durable sends during the flood',
    sendAll(
      conn,
      'flood-survivor',
      bodies.map((body) => ({ body, durable: true })),
    ),
  );
  expect(outcomes.map((o) => o.state)).toEqual(bodies.map(() => 'accepted'));
  const receiver = new TestReceiver(conn, 'flood-survivor');
  const got = await receiver.next(MESSAGES, STEP_DEADLINE_MS);
  expect(got.map((g) => g.message.body)).toEqual(bodies);
  for (const g of got) g.delivery.accept();
  await closeConnection(conn);

  // the process never stopped, and it still stops cleanly (store flushed and closed)
  expect(broker.child.exitCode).toBeNull();
  expect(broker.child.signalCode).toBeNull();
  broker.child.kill('SIGTERM');
  expect(await broker.exited).toBe(0);
}, 60_000);
