/**
 * Huge message-ids cannot fill a deduplicating broker's heap (docs/security.md#bounded-work-per-input).
 * Issue 31: with the heap limited to 1 GiB, string ids of 1 MiB filled it until the broker died
 * of "JavaScript heap out of memory" while the memory alarm never fired. Here a real broker
 * process runs with its heap limited to HEAP_MIB and `--dedup`, and an attacker publishes
 * ATTACK_IDS messages with distinct 1 MiB string ids (small bodies) that it drains as it goes, so
 * that what piles up is the dedup window alone: kept verbatim, those ids are twice the heap. The
 * broker must stay up, a victim's sends must keep being accepted, and a re-send of the first id
 * must still be recognised as a duplicate.
 *
 * The memory alarm alone does not save a broker that keeps ids verbatim: it judges the heap, so it
 * does go on as the window grows, but a publisher keeps the credit it already holds (a window of
 * `publisherCredit`, 1,000 messages), and that many 1 MiB keys pass any heap limit. Keying long
 * ids by digest is what bounds the window. A 64 MiB heap keeps the run short (the broker handles
 * a 1 MiB message in tens of milliseconds); on the code that kept ids verbatim it dies of
 * "JavaScript heap out of memory" within seconds.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type rhea from 'rhea';
import { afterEach, beforeEach, expect, it } from 'vitest';
import {
  closeConnection,
  type RheaConnection,
  connect as rheaConnect,
  sendAll,
} from '../../../cluster-broker/server/rhea-client.js';
import { type BrokerProcess, spawnBroker } from '../../../support/broker-process.js';

const HEAP_MIB = 64;
const ID_CHARS = 1024 * 1024;
/** Ids of ID_CHARS each, together twice the broker's heap limit. */
const ATTACK_IDS = 2 * HEAP_MIB;
const ATTACK_ADDRESS = 'attack-ids';

let broker: BrokerProcess;
let dataDir = '';
let victimConn: RheaConnection;
let attackerConn: RheaConnection;

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'qb-dedup-heap-'));
  broker = await spawnBroker(
    ['--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir, '--dedup'],
    30_000,
    { nodeFlags: [`--max-old-space-size=${HEAP_MIB}`] },
  );
  victimConn = await rheaConnect({ port: broker.port });
  attackerConn = await rheaConnect({ port: broker.port });
}, 60_000);

afterEach(async () => {
  if (broker?.child.exitCode === null && broker.child.signalCode === null) {
    broker.child.kill('SIGKILL');
    await broker.exited;
  }
  if (victimConn) await closeConnection(victimConn);
  if (attackerConn) await closeConnection(attackerConn);
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

/** The i-th attack id: distinct per i, ID_CHARS long, made only when sent (the test keeps none). */
function attackId(i: number): string {
  const prefix = `${i}:`;
  return prefix + 'x'.repeat(ID_CHARS - prefix.length);
}

/** Rejects once the broker process exits, with its fatal error and memory alarm lines. */
function brokerDeath(): Promise<never> {
  return broker.exited.then((code) => {
    const fatal = broker.stderr.filter((l) => /FATAL|out of memory|alarm/i.test(l));
    throw new Error(`the broker exited (${code}) under the attack: ${fatal.join('\n')}`);
  });
}

/**
 * Publishes ATTACK_IDS messages with huge ids, at most `window` unsettled at once, and resolves
 * once every one is accepted (rejects on any other outcome or a closed link).
 */
function publishHugeIds(window: number): Promise<void> {
  const sender = attackerConn.open_sender({ target: { address: ATTACK_ADDRESS } });
  let next = 0;
  let accepted = 0;
  return new Promise((resolve, reject) => {
    const pump = (): void => {
      while (next < ATTACK_IDS && next - accepted < window && sender.sendable()) {
        sender.send({ message_id: attackId(next), body: `attack ${next}` });
        next++;
      }
    };
    sender.on('sendable', pump);
    sender.on('accepted', () => {
      if (++accepted === ATTACK_IDS) {
        sender.close();
        resolve();
      } else pump();
    });
    for (const outcome of ['rejected', 'released', 'modified'] as const) {
      sender.on(outcome, () => reject(new Error(`an attack message was ${outcome}`)));
    }
    sender.on('sender_close', () => {
      if (accepted < ATTACK_IDS) reject(new Error(`the attack sender was closed after ${accepted}`));
    });
  });
}

/** A receiver on the attack address that drains as it goes, keeping the bodies it got. */
function drain(): { link: rhea.Receiver; bodies: string[]; arrived: (body: string) => Promise<void> } {
  const bodies: string[] = [];
  const waiters = new Map<string, () => void>();
  const link = attackerConn.open_receiver({ source: { address: ATTACK_ADDRESS }, credit_window: 8 });
  link.on('message', (ctx) => {
    const body = String(ctx.message?.body);
    bodies.push(body);
    waiters.get(body)?.();
  });
  const arrived = (body: string): Promise<void> =>
    bodies.includes(body) ? Promise.resolve() : new Promise((resolve) => waiters.set(body, resolve));
  return { link, bodies, arrived };
}

/**
 * The victim sends to its own queue one message at a time until `stop` is set, and counts its
 * accepted sends; any other outcome rejects `failure`.
 */
function victimSending(): { accepted: () => number; stop: () => void; failure: Promise<never> } {
  const sender = victimConn.open_sender({ target: { address: 'victim' } });
  let accepted = 0;
  let stopped = false;
  let fail: (err: Error) => void = () => {};
  const failure = new Promise<never>((_, reject) => {
    fail = reject;
  });
  failure.catch(() => undefined);
  const sendOne = (): void => {
    sender.send({ body: `victim ${accepted}` });
  };
  sender.once('sendable', sendOne);
  sender.on('accepted', () => {
    accepted++;
    if (!stopped) sendOne();
  });
  sender.on('rejected', () => fail(new Error('a victim send was rejected')));
  return {
    accepted: () => accepted,
    stop: () => {
      stopped = true;
      sender.close();
    },
    failure,
  };
}

it(`${ATTACK_IDS} distinct 1 MiB string message-ids on a --dedup broker with a ${HEAP_MIB} MiB heap: it stays up, serves a victim, and still detects a duplicate`, async () => {
  const death = brokerDeath();
  death.catch(() => undefined);
  const drained = drain();
  const victim = victimSending();
  await Promise.race([publishHugeIds(4), death, victim.failure]);
  await Promise.race([drained.arrived(`attack ${ATTACK_IDS - 1}`), death]);
  victim.stop();

  // the victim was served while the attack ran, and still is: on a new link, which gets credit only
  // once no alarm is on (so a memory alarm raised by the attack has cleared)
  expect(victim.accepted()).toBeGreaterThan(0);
  const after = await Promise.race([sendAll(victimConn, 'victim', [{ body: 'after' }]), death]);
  expect(after.map((o) => o.state)).toEqual(['accepted']);

  // a re-send of the first id is accepted and dropped as a duplicate: the marker sent behind it
  // on the same link arrives, and the duplicate never did
  const resend = await Promise.race([
    sendAll(attackerConn, ATTACK_ADDRESS, [
      { message_id: attackId(0), body: 'duplicate' },
      { message_id: 'marker', body: 'marker' },
    ]),
    death,
  ]);
  expect(resend.map((o) => o.state)).toEqual(['accepted', 'accepted']);
  await Promise.race([drained.arrived('marker'), death]);
  expect(drained.bodies).not.toContain('duplicate');
  expect(drained.bodies).toHaveLength(ATTACK_IDS + 1);

  expect(broker.child.exitCode).toBeNull();
  expect(broker.stderr.join('\n')).not.toMatch(/heap out of memory/i);
  drained.link.close();
}, 120_000);
