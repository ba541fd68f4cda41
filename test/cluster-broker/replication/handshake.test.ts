/**
 * The member-to-member handshake and framing, sans I/O: mutual proof of the secret, refusals
 * (wrong secret, cluster, member, addressee, a replayed proof), and the frame limits.
 */
import { describe, expect, it } from 'vitest';
import {
  FrameSplitter,
  fragments,
  frame,
  Reassembler,
} from '../../../src/cluster-broker/replication/framing.js';
import {
  AcceptorHandshake,
  DialerHandshake,
  HANDSHAKE_MAX_FRAME,
} from '../../../src/cluster-broker/replication/handshake.js';

const SECRET = Buffer.from('s'.repeat(32));
const NONE = 'none' as const;
const params = (self: string, key: Uint8Array | typeof NONE = SECRET, clusterId = 'c1') => ({
  secret: key === NONE ? undefined : key,
  clusterId,
  self,
});
const members = new Set(['n1', 'n2', 'n3']);

/** Runs a handshake to its end; returns where it stopped (or 'done') and the error, if any. */
function exchange(dialer: DialerHandshake, acceptor: AcceptorHandshake): { done: boolean; error?: string } {
  try {
    const challenge = acceptor.step(dialer.hello());
    const proof = dialer.step(challenge.reply!);
    const ok = acceptor.step(proof.reply!);
    expect(ok.done).toBe(true);
    return { done: dialer.step(ok.reply!).done };
  } catch (err) {
    return { done: false, error: (err as Error).message };
  }
}

describe('cluster handshake', () => {
  it('completes when both hold the secret, naming the dialler', () => {
    const a = new AcceptorHandshake(params('n1'), (id) => members.has(id));
    expect(exchange(new DialerHandshake(params('n2'), 'n1'), a)).toEqual({ done: true });
    expect(a.peer).toBe('n2');
    // without a secret on both sides (loopback-only clusters) it completes too
    const b = new AcceptorHandshake(params('n1', NONE), (id) => members.has(id));
    expect(exchange(new DialerHandshake(params('n2', NONE), 'n1'), b)).toEqual({ done: true });
  });

  it('keeps every frame within the pre-auth limit', () => {
    const long = 'x'.repeat(64);
    const d = new DialerHandshake(params(long, SECRET, long), long);
    expect(d.hello().length).toBeLessThanOrEqual(HANDSHAKE_MAX_FRAME);
  });

  it.each([
    [
      'the dialler has another secret',
      params('n2', Buffer.from('t'.repeat(32))),
      params('n1'),
      /n1 did not prove/,
    ],
    ['the dialler has no secret', params('n2', NONE), params('n1'), /n1 did not prove/],
    ['another cluster', params('n2', SECRET, 'other'), params('n1'), /cluster id 'other'/],
    ['an unknown member', params('n9'), params('n1'), /'n9' is not a member/],
    ['itself', params('n1'), params('n1'), /'n1' is not a member/],
  ])('refuses %s', (_what, dialerParams, acceptorParams, message) => {
    const a = new AcceptorHandshake(acceptorParams, (id) => members.has(id));
    const r = exchange(new DialerHandshake(dialerParams, 'n1'), a);
    expect(r.done).toBe(false);
    expect(r.error).toMatch(message);
  });

  it('refuses a hello addressed to another member', () => {
    const a = new AcceptorHandshake(params('n1'), (id) => members.has(id));
    expect(exchange(new DialerHandshake(params('n2'), 'n3'), a).error).toMatch(/addressed to member 'n3'/);
  });

  it('refuses a proof that does not match: the acceptor checks the dialler too', () => {
    const a = new AcceptorHandshake(params('n1'), (id) => members.has(id));
    const d = new DialerHandshake(params('n2'), 'n1');
    a.step(d.hello());
    const forged = Buffer.alloc(33);
    forged[0] = 3;
    expect(() => a.step(forged)).toThrow(/'n2' did not prove the cluster secret/);
  });

  it('refuses a proof recorded on an earlier connection (fresh nonces)', () => {
    const a1 = new AcceptorHandshake(params('n1'), (id) => members.has(id));
    const d = new DialerHandshake(params('n2'), 'n1');
    const hello = d.hello();
    const proof = d.step(a1.step(hello).reply!).reply!;
    const a2 = new AcceptorHandshake(params('n1'), (id) => members.has(id));
    a2.step(hello);
    expect(() => a2.step(proof)).toThrow(/did not prove/);
  });
});

describe('member framing', () => {
  it('refuses an oversized length at the header, before collecting a body', () => {
    const s = new FrameSplitter(HANDSHAKE_MAX_FRAME);
    const head = Buffer.alloc(4);
    head.writeUInt32BE(256 * 1024 * 1024);
    expect(() => s.push(head, () => {})).toThrow(/exceeds 256/);
    // the fragment bit is not allowed before authentication: it reads as a huge length
    const frag = Buffer.alloc(4);
    frag.writeUInt32BE(0x8000_0010);
    expect(() => new FrameSplitter(HANDSHAKE_MAX_FRAME).push(frag, () => {})).toThrow(/exceeds/);
  });

  it('cuts a large message into fragments of at most the frame size and joins them', () => {
    const payload = new Uint8Array(2500).map((_, i) => i % 256);
    const wire = Buffer.concat(fragments(payload, 1000));
    const s = new FrameSplitter(1000, true);
    const r = new Reassembler(10_000);
    const sizes: number[] = [];
    const whole: Buffer[] = [];
    // byte by byte, to cross every header and body boundary
    for (let i = 0; i < wire.length; i++) {
      s.push(wire.subarray(i, i + 1), (f, more) => {
        sizes.push(f.length);
        const m = r.push(f, more);
        if (m) whole.push(m);
      });
    }
    expect(sizes).toEqual([1000, 1000, 500]);
    expect(whole).toHaveLength(1);
    expect(whole[0]!.equals(Buffer.from(payload))).toBe(true);
    expect(Buffer.concat(fragments(new Uint8Array(10), 1000))).toEqual(
      Buffer.concat(frame(new Uint8Array(10))),
    );
    expect(() => new Reassembler(1500).push(Buffer.alloc(1000), true) && undefined).not.toThrow();
    const small = new Reassembler(1500);
    small.push(Buffer.alloc(1000), true);
    expect(() => small.push(Buffer.alloc(1000), true)).toThrow(/exceeds 1500/);
  });

  it('cuts the same frames whatever the chunk boundaries (headers and bodies split anywhere)', () => {
    const payloads = [0, 1, 3, 4, 5, 700, 64, 2000, 9, 1500].map((n, k) =>
      new Uint8Array(n).map((_, i) => (i * 7 + k) % 256),
    );
    const wire = Buffer.concat(payloads.flatMap((p) => frame(p)));
    let seed = 7;
    const rand = (max: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return 1 + (seed % max);
    };
    for (const maxChunk of [1, 3, 5, 64, 1000, wire.length]) {
      const s = new FrameSplitter(4096, true);
      const got: Buffer[] = [];
      for (let at = 0; at < wire.length; ) {
        const end = Math.min(wire.length, at + rand(maxChunk));
        // each chunk a buffer of its own, as a socket gives them
        s.push(Buffer.from(wire.subarray(at, end)), (f, more) => {
          expect(more).toBe(false);
          got.push(Buffer.from(f));
        });
        at = end;
      }
      expect(got.map((f) => [...f])).toEqual(payloads.map((p) => [...p]));
    }
  });

  it('refuses an oversized length whose header is split across chunks', () => {
    const head = Buffer.alloc(4);
    head.writeUInt32BE(5000);
    const s = new FrameSplitter(4096, true);
    s.push(head.subarray(0, 2), () => {});
    expect(() => s.push(head.subarray(2), () => {})).toThrow(/exceeds 4096/);
  });
});
