/**
 * Codec benchmark: encode and decode, side by side with rhea 3.0.5 in the same run:
 *   (a) a small message with a 24 B string body
 *   (b) properties + application-properties + a 100 B data body
 *   (c) a 64 KiB data body
 *   (d) a transfer frame carrying (b), and a flow frame (our FrameReader vs rhea's read_frame)
 * Prints ops/s and the ratio ours/rhea, then each side's CPU time and page faults per call.
 * Every figure is measured in a process of its own that runs that one function only
 * (bench/lib/isolated-rate.ts), so that no case depends on what ran before it.
 *
 *   npx tsx bench/run.ts codec [--rounds 3] [--json]     or     npx tsx bench/codec.ts
 */

import { fileURLToPath, pathToFileURL } from 'node:url';
import rhea from 'rhea';
import rheaFrames from 'rhea/lib/frames.js';
import {
  decodeMessage,
  encodeAmqpFrame,
  encodeMessage,
  encodeMessageParts,
  FrameReader,
  type Message,
  type Performative,
} from '../src/codec/index.js';
import {
  measureRate,
  median,
  printRate,
  RATE_CHILD_FLAG,
  type Rate,
  type RatePhases,
  rateInChild,
} from './lib/isolated-rate.js';

type Loose = Record<string, unknown>;
const R = rhea as unknown as {
  message: { encode(m: Loose): Buffer; decode(b: Buffer): Loose; data_section(b: Buffer): unknown };
};
const F = rheaFrames as unknown as {
  read_frame(b: Buffer): unknown;
  write_frame(f: unknown): Buffer;
  amqp_frame(channel: number, performative: unknown, payload?: Buffer): unknown;
} & Record<string, (fields: Loose) => unknown>;

export interface CodecBenchRow {
  case: string;
  op: 'encode' | 'decode';
  oursOpsPerSec: number;
  rheaOpsPerSec: number;
  ratio: number;
  /** CPU time per call of the measuring process, microseconds (median of the rounds) */
  oursCpuUsPerOp: number;
  rheaCpuUsPerOp: number;
  /** minor page faults per call of the measuring process (median of the rounds) */
  oursFaultsPerOp: number;
  rheaFaultsPerOp: number;
}
export interface CodecBenchOptions {
  log?: (line: string) => void;
  /** measurement rounds, each case and side a fresh process per round; the median is reported (default 3) */
  rounds?: number;
}

const body100 = new Uint8Array(100).fill(0x61);
const body64k = new Uint8Array(64 * 1024).fill(0x62);
const created = new Date(1_700_000_000_000);

const small: Message = { body: 'abcdefghijklmnopqrstuvwx' };
const withProps: Message = {
  messageId: 'msg-00000001',
  to: 'orders',
  subject: 'order.created',
  replyTo: 'replies',
  contentType: 'application/octet-stream',
  creationTime: created,
  applicationProperties: { region: 'eu-west', attempt: 3, priorityCustomer: true },
  body: body100,
};
const big: Message = { body: body64k };

function toRhea(m: Message): Loose {
  const out: Loose = {};
  for (const [k, v] of Object.entries(m)) {
    const snake = k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    out[snake] = k === 'body' && v instanceof Uint8Array ? R.message.data_section(Buffer.from(v)) : v;
  }
  return out;
}

const transfer: Performative = {
  type: 'transfer',
  body: {
    handle: 0,
    deliveryId: 4242,
    deliveryTag: Uint8Array.of(0, 0, 0x10, 0x92),
    messageFormat: 0,
    settled: false,
  },
};
const flow: Performative = {
  type: 'flow',
  body: {
    nextIncomingId: 100,
    incomingWindow: 2048,
    nextOutgoingId: 4243,
    outgoingWindow: 2048,
    handle: 0,
    deliveryCount: 4242,
    linkCredit: 500,
    drain: false,
  },
};
const rheaTransfer = () =>
  F.transfer({
    handle: 0,
    delivery_id: 4242,
    delivery_tag: Buffer.from([0, 0, 0x10, 0x92]),
    message_format: 0,
    settled: false,
  });
const rheaFlow = () =>
  F.flow({
    next_incoming_id: 100,
    incoming_window: 2048,
    next_outgoing_id: 4243,
    outgoing_window: 2048,
    handle: 0,
    delivery_count: 4242,
    link_credit: 500,
    drain: false,
  });

type Side = 'ours' | 'rhea';
/** One case: builds, for one side, the function measured (and only that side's fixtures). */
interface Case {
  case: string;
  op: 'encode' | 'decode';
  build: Record<Side, () => () => unknown>;
}

/** one long-lived reader, as a connection has: push the frame's bytes, take the frame */
function oursReaderOf(frame: Uint8Array): () => unknown {
  const reader = new FrameReader({ maxFrameSize: 1 << 20 });
  return () => {
    reader.push(frame);
    return reader.next();
  };
}

// rhea's read_frame is lazy (fields are unwrapped by getters on access); an engine reads them
// all, so also compare against read_frame + reading every field
function rheaReadingFields(b: Buffer, names: readonly string[]): () => unknown {
  return () => {
    const p = (F.read_frame(b) as { performative: Loose }).performative;
    let x = 0;
    for (const n of names) if (p[n] !== undefined) x++;
    return x;
  };
}
const transferFields = [
  'handle',
  'delivery_id',
  'delivery_tag',
  'message_format',
  'settled',
  'more',
  'rcv_settle_mode',
  'state',
  'resume',
  'aborted',
  'batchable',
];
const flowFields = [
  'next_incoming_id',
  'incoming_window',
  'next_outgoing_id',
  'outgoing_window',
  'handle',
  'delivery_count',
  'link_credit',
  'available',
  'drain',
  'echo',
  'properties',
];

const oursTransferFrame = () => encodeAmqpFrame(1, transfer, encodeMessage(withProps));
const rheaTransferFrame = () =>
  F.write_frame(F.amqp_frame(1, rheaTransfer(), Buffer.from(encodeMessage(withProps))));
const oursFlowFrame = () => encodeAmqpFrame(1, flow);
const rheaFlowFrame = () => F.write_frame(F.amqp_frame(1, rheaFlow()));

function messageCases(name: string, m: Message): Case[] {
  const out: Case[] = [
    {
      case: name,
      op: 'encode',
      build: {
        ours: () => () => encodeMessage(m),
        rhea: () => {
          const rm = toRhea(m);
          return () => R.message.encode(rm);
        },
      },
    },
    {
      case: name,
      op: 'decode',
      build: {
        ours: () => {
          const bytes = encodeMessage(m);
          return () => decodeMessage(bytes);
        },
        rhea: () => {
          const bytes = R.message.encode(toRhea(m));
          return () => R.message.decode(bytes);
        },
      },
    },
  ];
  if (m === big) {
    // zero-copy variant for writev: the 64 KiB body is referenced, not copied
    out.push({
      ...out[0],
      case: `${name}, parts`,
      build: { ...out[0].build, ours: () => () => encodeMessageParts(m) },
    });
  }
  return out;
}

/** every case of the bench, in the order printed; a case's index names it to a child process */
const CASES: Case[] = [
  ...messageCases('(a) small message, 24 B string body', small),
  ...messageCases('(b) properties + app-properties + 100 B data', withProps),
  ...messageCases('(c) 64 KiB data body', big),
  {
    case: '(d) transfer frame carrying (b)',
    op: 'encode',
    build: {
      ours: () => {
        const payload = encodeMessage(withProps);
        return () => encodeAmqpFrame(1, transfer, payload);
      },
      rhea: () => {
        const payload = Buffer.from(encodeMessage(withProps));
        return () => F.write_frame(F.amqp_frame(1, rheaTransfer(), payload));
      },
    },
  },
  {
    case: '(d) transfer frame carrying (b)',
    op: 'decode',
    build: {
      ours: () => oursReaderOf(oursTransferFrame()),
      rhea: () => {
        const b = rheaTransferFrame();
        return () => F.read_frame(b);
      },
    },
  },
  {
    case: '(d) flow frame',
    op: 'encode',
    build: { ours: () => oursFlowFrame, rhea: () => rheaFlowFrame },
  },
  {
    case: '(d) flow frame',
    op: 'decode',
    build: {
      ours: () => oursReaderOf(oursFlowFrame()),
      rhea: () => {
        const b = rheaFlowFrame();
        return () => F.read_frame(b);
      },
    },
  },
  {
    case: '(d) transfer frame, rhea fields read',
    op: 'decode',
    build: {
      ours: () => oursReaderOf(oursTransferFrame()),
      rhea: () => rheaReadingFields(rheaTransferFrame(), transferFields),
    },
  },
  {
    case: '(d) flow frame, rhea fields read',
    op: 'decode',
    build: {
      ours: () => oursReaderOf(oursFlowFrame()),
      rhea: () => rheaReadingFields(rheaFlowFrame(), flowFields),
    },
  },
];

/** warm-up, then measured time, of each child process (ms) */
const PHASES: RatePhases = { warmupMs: 300, measureMs: 700 };
const thisFile = fileURLToPath(import.meta.url);

function flagValue(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

export async function run(opts: CodecBenchOptions = {}): Promise<CodecBenchRow[]> {
  const log = opts.log ?? ((line: string) => console.log(line));
  const rounds = opts.rounds ?? Number(flagValue('--rounds') ?? 3);
  if (!(Number.isInteger(rounds) && rounds >= 1)) throw new Error(`--rounds must be a positive integer`);
  // Each measurement is a process of its own measuring one function (bench/lib/isolated-rate.ts),
  // ours and rhea's back to back, the order swapped every round so that neither always runs
  // second; the median of the rounds is reported.
  const t0 = Date.now();
  const rates = CASES.map(() => ({ ours: [] as Rate[], rhea: [] as Rate[] }));
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < CASES.length; i++) {
      const order: Side[] = r % 2 === 0 ? ['ours', 'rhea'] : ['rhea', 'ours'];
      for (const side of order) {
        rates[i][side].push(
          await rateInChild(thisFile, [String(i), side, String(PHASES.warmupMs), String(PHASES.measureMs)]),
        );
      }
    }
  }
  const rows: CodecBenchRow[] = CASES.map((c, i) => {
    const ours = median(rates[i].ours.map((x) => x.opsPerSec));
    const theirs = median(rates[i].rhea.map((x) => x.opsPerSec));
    return {
      case: c.case,
      op: c.op,
      oursOpsPerSec: Math.round(ours),
      rheaOpsPerSec: Math.round(theirs),
      ratio: Number((ours / theirs).toFixed(2)),
      oursCpuUsPerOp: Number(median(rates[i].ours.map((x) => x.cpuUsPerOp)).toFixed(3)),
      rheaCpuUsPerOp: Number(median(rates[i].rhea.map((x) => x.cpuUsPerOp)).toFixed(3)),
      oursFaultsPerOp: Number(median(rates[i].ours.map((x) => x.faultsPerOp)).toFixed(3)),
      rheaFaultsPerOp: Number(median(rates[i].rhea.map((x) => x.faultsPerOp)).toFixed(3)),
    };
  });
  const fmt = (n: number) => n.toLocaleString('en-US').padStart(11);
  log(
    `${'case'.padEnd(46)} ${'op'.padEnd(6)} ${'ours ops/s'.padStart(11)} ${'rhea ops/s'.padStart(11)}  ours/rhea`,
  );
  for (const r of rows) {
    log(
      `${r.case.padEnd(46)} ${r.op.padEnd(6)} ${fmt(r.oursOpsPerSec)} ${fmt(r.rheaOpsPerSec)}  ${r.ratio.toFixed(2)}x`,
    );
  }
  log('');
  log(
    `each figure: the median of ${rounds} round(s), each a fresh process per case and side (${PHASES.warmupMs} ms warm-up, ${PHASES.measureMs} ms measured); ${Math.round((Date.now() - t0) / 1000)} s in all`,
  );
  log(
    'per call, medians: CPU us of the process (GC included), ours / rhea, and rhea/ours; minor page faults, ours / rhea',
  );
  for (const r of rows) {
    const cpuRatio = r.rheaCpuUsPerOp / r.oursCpuUsPerOp;
    log(
      `${r.case.padEnd(46)} ${r.op.padEnd(6)} cpu ${r.oursCpuUsPerOp.toFixed(3)} / ${r.rheaCpuUsPerOp.toFixed(3)} us ${cpuRatio.toFixed(2)}x, faults ${r.oursFaultsPerOp.toFixed(3)} / ${r.rheaFaultsPerOp.toFixed(3)}`,
    );
  }
  return rows;
}

/** Child side: measure the one function `--rate-child <case index> <side> <warmup ms> <measure ms>` names. */
function runChild(): void {
  const [index, side, warmupMs, measureMs] = process.argv.slice(process.argv.indexOf(RATE_CHILD_FLAG) + 1);
  const c = CASES[Number(index)];
  if (c === undefined || (side !== 'ours' && side !== 'rhea')) throw new Error(`no case ${index} ${side}`);
  printRate(measureRate(c.build[side](), { warmupMs: Number(warmupMs), measureMs: Number(measureMs) }));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  if (process.argv.includes(RATE_CHILD_FLAG)) runChild();
  else await run();
}
