/**
 * An attacker on the cluster port, with the project's own codecs: it speaks the real handshake
 * with the right cluster and member ids but a wrong (or no) secret, then sends the frames of the
 * issue's probe (an InstallSnapshot carrying an empty state, `forward` requests deleting a queue
 * and injecting a message, a `status` advertising a fake address, a vote with a huge term).
 */
import net from 'node:net';
import { encodeEntry } from '../../../src/cluster-broker/cluster/entry-codec.js';
import { encodeApp } from '../../../src/cluster-broker/cluster/peer-wire.js';
import { BrokerState } from '../../../src/cluster-broker/core/broker-state.js';
import { encodeEvent } from '../../../src/cluster-broker/core/event-codec.js';
import { writeSnapshot } from '../../../src/cluster-broker/core/snapshot-codec.js';
import { FrameSplitter, fragments, frame } from '../../../src/cluster-broker/replication/framing.js';
import {
  DialerHandshake,
  decodeChallenge,
  encodeProof,
  handshakeMac,
} from '../../../src/cluster-broker/replication/handshake.js';
import { binaryWireCodec } from '../../../src/cluster-broker/replication/wire-binary.js';
import { encodeMessage } from '../../../src/codec/index.js';

export const FAKE_HOST = '203.0.113.66';
export const FAKE_PORT = 5999;

/** The probe's forged frames, claiming to come from `claimed` and addressed to `victim`. */
export function forgedFrames(victim: string, claimed: string, queue: string): Uint8Array[] {
  const huge = 1_000_000;
  const emptyState = writeSnapshot(new BrokerState());
  const forward = (event: Uint8Array): Uint8Array =>
    encodeApp({
      kind: 'forward',
      from: claimed,
      to: victim,
      request: encodeEntry(`${claimed}@forged|x`, 1, { kind: 'event', event }),
    });
  return [
    binaryWireCodec.encodeMessage({
      type: 'snapshot',
      from: claimed,
      to: victim,
      term: huge,
      snapshot: { index: huge, term: huge, data: emptyState },
    }),
    forward(encodeEvent({ type: 'delete', leaderTime: 0, queue })),
    forward(
      encodeEvent({
        type: 'enqueue',
        leaderTime: 0,
        queue,
        message: encodeMessage({ messageId: 'injected', body: 'injected' }),
      }),
    ),
    encodeApp({
      kind: 'status',
      from: claimed,
      to: victim,
      status: {
        host: FAKE_HOST,
        port: FAKE_PORT,
        scheme: 'amqp',
        serving: true,
        leaderId: claimed,
        term: huge,
        commitIndex: huge,
      },
    }),
    binaryWireCodec.encodeMessage({
      type: 'vote',
      from: claimed,
      to: victim,
      term: huge,
      pre: false,
      lastIndex: huge,
      lastTerm: huge,
    }),
  ];
}

export interface ImpostorOutcome {
  /** The member sent a challenge (it read our hello). */
  challenged: boolean;
  /** The member said ok: we got in (must never happen without the secret). */
  accepted: boolean;
  /** The member closed the connection (rather than us giving up). */
  closedByMember: boolean;
}

/**
 * Connects to `port` as member `claimed` of `clusterId` dialling `victim`, proves a `secret` the
 * cluster does not share (undefined: the empty key of a member without a secret), then sends
 * `frames` and waits until the member closes the connection (or `waitMs` passes).
 */
export function impersonate(options: {
  port: number;
  clusterId: string;
  victim: string;
  claimed: string;
  secret: Uint8Array | undefined;
  frames: Uint8Array[];
  waitMs?: number;
}): Promise<ImpostorOutcome> {
  const { port, clusterId, victim, claimed, secret } = options;
  const out: ImpostorOutcome = { challenged: false, accepted: false, closedByMember: false };
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port });
    const hs = new DialerHandshake({ secret, clusterId, self: claimed }, victim);
    const hello = hs.hello();
    const ourNonce = hello.subarray(hello.length - 32);
    const splitter = new FrameSplitter(1024);
    let gaveUp = false;
    const giveUp = setTimeout(() => {
      gaveUp = true;
      s.destroy();
    }, options.waitMs ?? 10_000);
    s.on('connect', () => s.write(Buffer.concat(frame(hello))));
    s.on('data', (chunk: Buffer) => {
      splitter.push(chunk, (f) => {
        if (!out.challenged) {
          out.challenged = true;
          const { nonce } = decodeChallenge(f);
          const proof = handshakeMac(secret, 'dialer', clusterId, claimed, victim, ourNonce, nonce);
          s.write(Buffer.concat(frame(encodeProof(proof))));
          // no waiting for a verdict: the forged frames follow at once, as an attacker would send them
          for (const payload of options.frames) s.write(Buffer.concat(fragments(payload)));
          return;
        }
        out.accepted = true;
      });
    });
    s.on('error', () => {});
    s.on('close', () => {
      clearTimeout(giveUp);
      out.closedByMember = !gaveUp;
      resolve(out);
    });
  });
}
