/**
 * The member-to-member handshake (sans I/O): mutual challenge-response over the cluster secret.
 *
 *   dialer   -> acceptor  hello     [1][version][clusterId][dialer id][acceptor id][dialer nonce]
 *   acceptor -> dialer    challenge [2][acceptor nonce][MAC("acceptor")]
 *   dialer   -> acceptor  proof     [3][MAC("dialer")]
 *   acceptor -> dialer    ok        [4]
 *
 * MAC(label) = HMAC-SHA256(secret, protocol label, direction label, cluster id, dialer id,
 * acceptor id, dialer nonce, acceptor nonce), every field length-prefixed. Both nonces are fresh
 * random 32 bytes, so a recorded exchange proves nothing on a later connection, and each side
 * proves knowledge of the secret without sending it. MACs are compared in constant time. Without
 * a secret (a loopback-only cluster) the key is empty: members still prove their ids agree, but
 * anyone who can reach the port can pass.
 *
 * Every handshake frame is small (`HANDSHAKE_MAX_FRAME`); the transport reads nothing larger
 * before `done`.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { ReplicationError } from './errors.js';

export const HANDSHAKE_VERSION = 1;
/** Largest handshake frame a member accepts (a hello with three 64-byte names is 229 bytes). */
export const HANDSHAKE_MAX_FRAME = 256;
/** Longest cluster id or member id, in UTF-8 bytes. */
export const MAX_NAME_BYTES = 64;
const NONCE_BYTES = 32;
const MAC_BYTES = 32;
const PROTOCOL_LABEL = 'quorate-cluster-auth-v1';
const HELLO = 1;
const CHALLENGE = 2;
const PROOF = 3;
const OK = 4;

export interface HandshakeParams {
  /** The cluster secret; empty or absent: no secret (loopback-only clusters). */
  readonly secret: Uint8Array | undefined;
  readonly clusterId: string;
  /** This member's id. */
  readonly self: string;
}

function refused(why: string): never {
  throw new ReplicationError('amqp:unauthorized-access', `cluster handshake refused: ${why}`);
}

function malformed(why: string): never {
  throw new ReplicationError('amqp:decode-error', `cluster handshake: ${why}`);
}

/** Checks a cluster or member id fits the handshake (throws 'amqp:invalid-field'). */
export function checkHandshakeName(what: string, name: string): void {
  const n = Buffer.byteLength(name);
  if (n === 0 || n > MAX_NAME_BYTES) {
    throw new ReplicationError('amqp:invalid-field', `${what} '${name}' must be 1..${MAX_NAME_BYTES} bytes`);
  }
}

function putName(parts: Buffer[], name: string): void {
  const b = Buffer.from(name, 'utf8');
  parts.push(Buffer.from([b.length]), b);
}

class Reader {
  private off = 0;
  constructor(private readonly buf: Uint8Array) {}
  u8(): number {
    if (this.off >= this.buf.length) malformed('truncated frame');
    return this.buf[this.off++]!;
  }
  bytes(n: number): Uint8Array {
    if (this.off + n > this.buf.length) malformed('truncated frame');
    const b = this.buf.subarray(this.off, this.off + n);
    this.off += n;
    return b;
  }
  name(): string {
    const n = this.u8();
    if (n === 0 || n > MAX_NAME_BYTES) malformed('bad name length');
    return Buffer.from(this.bytes(n)).toString('utf8');
  }
  end(): void {
    if (this.off !== this.buf.length) malformed('trailing bytes');
  }
}

/** MAC(direction) of one handshake (exported for tests that play an impostor). */
export function handshakeMac(
  secret: Uint8Array | undefined,
  direction: 'acceptor' | 'dialer',
  clusterId: string,
  dialer: string,
  acceptor: string,
  dialerNonce: Uint8Array,
  acceptorNonce: Uint8Array,
): Buffer {
  const h = createHmac('sha256', secret && secret.length > 0 ? secret : Buffer.alloc(0));
  for (const field of [PROTOCOL_LABEL, direction, clusterId, dialer, acceptor]) {
    const b = Buffer.from(field, 'utf8');
    h.update(Buffer.from([b.length])).update(b);
  }
  return h.update(dialerNonce).update(acceptorNonce).digest();
}

function sameMac(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The acceptor's nonce and MAC from a challenge frame (after its tag). */
function readChallenge(r: Reader): { nonce: Uint8Array; mac: Uint8Array } {
  const nonce = r.bytes(NONCE_BYTES);
  const mac = r.bytes(MAC_BYTES);
  r.end();
  return { nonce, mac };
}

/** Decodes a whole challenge frame (exported for tests that play an impostor). */
export function decodeChallenge(frame: Uint8Array): { nonce: Uint8Array; mac: Uint8Array } {
  const r = new Reader(frame);
  if (r.u8() !== CHALLENGE) malformed('expected a challenge');
  return readChallenge(r);
}

export function encodeProof(mac: Uint8Array): Uint8Array {
  return Buffer.concat([Buffer.from([PROOF]), mac]);
}

/** A step's result: bytes to send (if any), and whether the peer is now authenticated. */
export interface HandshakeStep {
  readonly reply?: Uint8Array;
  readonly done: boolean;
}

/** The side that dials: sends hello, checks the acceptor's MAC, proves itself. */
export class DialerHandshake {
  private readonly nonce: Buffer = randomBytes(NONCE_BYTES);
  private state: 'challenge' | 'ok' | 'done' = 'challenge';

  constructor(
    private readonly p: HandshakeParams,
    /** The member we dial (its id as configured). */
    readonly peer: string,
  ) {}

  hello(): Uint8Array {
    const parts: Buffer[] = [Buffer.from([HELLO, HANDSHAKE_VERSION])];
    putName(parts, this.p.clusterId);
    putName(parts, this.p.self);
    putName(parts, this.peer);
    parts.push(this.nonce);
    return Buffer.concat(parts);
  }

  /** Feed one frame from the acceptor; throws ReplicationError when it is refused or malformed. */
  step(frame: Uint8Array): HandshakeStep {
    const r = new Reader(frame);
    const tag = r.u8();
    if (this.state === 'challenge') {
      if (tag !== CHALLENGE) malformed(`expected a challenge, got tag ${tag}`);
      const { nonce: theirNonce, mac: theirMac } = readChallenge(r);
      const { secret, clusterId, self } = this.p;
      const expected = handshakeMac(secret, 'acceptor', clusterId, self, this.peer, this.nonce, theirNonce);
      if (!sameMac(expected, theirMac)) refused(`member ${this.peer} did not prove the cluster secret`);
      this.state = 'ok';
      const proof = handshakeMac(secret, 'dialer', clusterId, self, this.peer, this.nonce, theirNonce);
      return { reply: encodeProof(proof), done: false };
    }
    if (this.state === 'ok') {
      if (tag !== OK) malformed(`expected ok, got tag ${tag}`);
      r.end();
      this.state = 'done';
      return { done: true };
    }
    return malformed('frame after the handshake');
  }
}

/** The side that accepts: checks the hello's names, challenges, checks the dialer's proof. */
export class AcceptorHandshake {
  private readonly nonce: Buffer = randomBytes(NONCE_BYTES);
  private state: 'hello' | 'proof' | 'done' = 'hello';
  private dialerNonce: Uint8Array = new Uint8Array(0);
  /** The dialer's claimed id once its hello is in; authenticated once `step` returned done. */
  peer: string | undefined;

  constructor(
    private readonly p: HandshakeParams,
    /** Is `id` a member this one accepts connections from? */
    private readonly isPeer: (id: string) => boolean,
  ) {}

  step(frame: Uint8Array): HandshakeStep {
    const r = new Reader(frame);
    const tag = r.u8();
    const { secret, clusterId, self } = this.p;
    if (this.state === 'hello') {
      if (tag !== HELLO) malformed(`expected a hello, got tag ${tag}`);
      const version = r.u8();
      if (version !== HANDSHAKE_VERSION) refused(`unsupported handshake version ${version}`);
      const theirCluster = r.name();
      const from = r.name();
      const to = r.name();
      this.dialerNonce = Buffer.from(r.bytes(NONCE_BYTES));
      r.end();
      this.peer = from;
      if (theirCluster !== clusterId) refused(`cluster id '${theirCluster}' is not '${clusterId}'`);
      if (to !== self) refused(`addressed to member '${to}', this is '${self}'`);
      if (from === self || !this.isPeer(from)) refused(`'${from}' is not a member of this cluster`);
      this.state = 'proof';
      const ours = handshakeMac(secret, 'acceptor', clusterId, from, self, this.dialerNonce, this.nonce);
      return { reply: Buffer.concat([Buffer.from([CHALLENGE]), this.nonce, ours]), done: false };
    }
    if (this.state === 'proof') {
      if (tag !== PROOF) malformed(`expected a proof, got tag ${tag}`);
      const theirMac = r.bytes(MAC_BYTES);
      r.end();
      const expected = handshakeMac(
        secret,
        'dialer',
        clusterId,
        this.peer!,
        self,
        this.dialerNonce,
        this.nonce,
      );
      if (!sameMac(expected, theirMac)) refused(`'${this.peer}' did not prove the cluster secret`);
      this.state = 'done';
      return { reply: Buffer.from([OK]), done: true };
    }
    return malformed('frame after the handshake');
  }
}
