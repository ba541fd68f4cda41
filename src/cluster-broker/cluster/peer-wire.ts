/**
 * Member-to-member application messages, sent on the replication transport next to the Raft
 * messages (same connections, same proxies, so a partition cuts them too):
 *
 * - `forward`: a follower's request (an unstamped cluster entry) for the leader to propose;
 * - `status`: every member's periodic "here I am" with its AMQP address, role, commit index and
 *   client counts (members learn each other's client ports this way, `--peers` names cluster
 *   ports; the counts make `/api/overview` cluster-wide, docs/monitoring.md#cluster-counts).
 *
 * They travel through a WireCodec wrapped around the replication's own: a frame starting with
 * APP_TAG (never the first byte of a Raft message) decodes to a carried AppMessage, which the
 * transport checks like any message (its sender must be the authenticated member) and then hands
 * to the codec's `consume`, which passes it to `onApp`.
 */
import type { ByteWriter } from '../../common/byte-writer.js';
import { VarintReader, VarintWriter } from '../core/binary.js';
import type { Message } from '../replication/raft/types.js';
import { isCountable, UnsafeNumberError } from '../replication/safe-numbers.js';
import type { WireCodec } from '../replication/wire.js';

const APP_TAG = 0xc7;
const KIND_FORWARD = 1;
const KIND_STATUS = 2;
/** The reused scratch writer's size; one grown past it for a large request is not kept. */
const SCRATCH_BYTES = 64 * 1024;

/** What a member tells the others about itself. */
export interface MemberStatus {
  /** Host clients should dial. */
  host: string;
  /** AMQP client port. */
  port: number;
  scheme: 'amqp' | 'amqps';
  /** Serving clients now (quorate and caught up). */
  serving: boolean;
  leaderId: string | null;
  term: number;
  commitIndex: number;
  /** Its AMQP-over-WebSocket URL (`ws://host:port` or `wss://`), when it serves one. */
  wsUrl?: string;
  /** Its monitoring endpoints (`http://host:port`), when it serves them. */
  httpUrl?: string;
  /**
   * Unused link credit of its consumers, per federated queue: the member running a federation
   * link adds it to its own consumers' (docs/federation.md#cluster).
   */
  credit?: Record<string, number>;
  /** Client connections open on it now (absent from members that predate the count). */
  connections?: number;
  /** Consumer links attached on it now (absent from members that predate the count). */
  consumers?: number;
}

export type AppMessage =
  | { kind: 'forward'; from: string; to: string; request: Uint8Array }
  | { kind: 'status'; from: string; to: string; status: MemberStatus };

export function encodeApp(m: AppMessage): Uint8Array {
  const w = new VarintWriter(m.kind === 'forward' ? m.request.length + 48 : 160);
  writeApp(w, m);
  return w.finish();
}

/** Writes `m` (encodeApp's layout) at the writer's position. */
function writeApp(w: VarintWriter, m: AppMessage): void {
  w.u8(APP_TAG);
  w.u8(m.kind === 'forward' ? KIND_FORWARD : KIND_STATUS);
  w.str(m.from);
  w.str(m.to);
  if (m.kind === 'forward') w.raw(m.request);
  else w.str(JSON.stringify(m.status));
}

/** Where encodeInto encodes a message before its copy into the transport's buffer (reused). */
let scratch = new VarintWriter(SCRATCH_BYTES);

export function decodeApp(bytes: Uint8Array): AppMessage {
  const r = new VarintReader(bytes, 1);
  const kind = r.u8();
  const from = r.str();
  const to = r.str();
  // a view: the frame's bytes are this message's alone (the transport passes each frame once,
  // and nothing else reads them), so the leader may stamp its time into them (onForward)
  if (kind === KIND_FORWARD) return { kind: 'forward', from, to, request: bytes.subarray(r.offset) };
  if (kind === KIND_STATUS) {
    const status = JSON.parse(r.str()) as MemberStatus;
    // a term or commit index we cannot count with is refused, never adopted (safe-numbers.ts)
    if (!isCountable(status.term)) throw new UnsafeNumberError('member status', 'term', status.term);
    if (!isCountable(status.commitIndex))
      throw new UnsafeNumberError('member status', 'commitIndex', status.commitIndex);
    for (const field of ['connections', 'consumers'] as const) {
      const n = status[field];
      if (n !== undefined && !isCountable(n)) throw new UnsafeNumberError('member status', field, n);
    }
    return { kind: 'status', from, to, status };
  }
  throw new Error(`unknown member message kind ${kind}`);
}

/** An AppMessage dressed as a replication Message, so the transport can carry it. */
interface CarriedApp {
  readonly type: 'app';
  readonly from: string;
  readonly to: string;
  readonly term: 0;
  readonly app: AppMessage;
}

export function carry(app: AppMessage): Message {
  const m: CarriedApp = { type: 'app', from: app.from, to: app.to, term: 0, app };
  return m as unknown as Message;
}

/** The replication codec plus our application messages. */
export function withAppMessages(inner: WireCodec, onApp: (m: AppMessage) => void): WireCodec {
  return {
    encodeMessage(m: Message): Uint8Array {
      const c = m as unknown as Partial<CarriedApp>;
      if (c.type === 'app' && c.app) return encodeApp(c.app);
      return inner.encodeMessage(m);
    },
    encodeInto(m: Message, w: ByteWriter): void {
      const c = m as unknown as Partial<CarriedApp>;
      if (c.type === 'app' && c.app) {
        // one message per forwarded request: no buffer of its own each, the scratch is reused
        const sw = scratch;
        sw.pos = 0;
        writeApp(sw, c.app);
        w.raw(sw.written());
        if (sw.buf.length > SCRATCH_BYTES) scratch = new VarintWriter(SCRATCH_BYTES);
      } else if (inner.encodeInto) inner.encodeInto(m, w);
      else w.raw(inner.encodeMessage(m));
    },
    decodeMessage(bytes: Uint8Array): Message {
      if (bytes[0] !== APP_TAG) return inner.decodeMessage(bytes);
      return carry(decodeApp(bytes));
    },
    consume(m: Message): boolean {
      const c = m as unknown as Partial<CarriedApp>;
      if (c.type !== 'app' || !c.app) return false;
      onApp(c.app);
      return true;
    },
  };
}
