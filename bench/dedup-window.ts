/**
 * The receiver dedup window alone (failover/receiver-dedup.ts), no broker, no client: fresh string
 * ids `m-<n>` decoded from bytes per message as the codec does, batches of 100 admitted, handed
 * out and accepted, the window full (10,000 remembered) before measuring. Prints the CPU time per
 * message of the window (the decode of the ids measured apart and taken off), median and range of
 * `--rounds` rounds.
 *
 *   npm run bench -- dedup-window [--messages N] [--rounds R] [--colliding]
 *
 * `--colliding`: every id gets the same hash (the window's internal hash parameter), as ids made
 * to collide would; the index then moves to a Map (key-rows.ts), so this is the cost an attacker
 * can bring a message to.
 */
import { cpuUsage } from 'node:process';
import { ReceiverDedup, receiverDedupKey } from '../src/failover/receiver-dedup.js';
import { flagValue } from './lib/flag-value.js';

const argv = process.argv.slice(2);
const value = (flag: string): string | undefined => flagValue(argv, flag);
const n = Number(value('--messages') ?? 200_000);
const rounds = Number(value('--rounds') ?? 7);
const colliding = argv.includes('--colliding');
const ACCEPTED = { type: 'accepted' } as const;
const BATCH = 100;

const wire = Buffer.alloc(32);
/** A fresh string per message, as the decoder makes one. */
function decodeId(i: number): string {
  const len = wire.write(`m-${i}`, 0, 'latin1');
  return wire.toString('latin1', 0, len);
}

type Window = ReceiverDedup<object>;
const token = {};
const keys: string[] = [];
const rows: number[] = [];

function receive(d: Window, from: number, count: number): void {
  for (let b = 0; b < count; b += BATCH) {
    for (let i = 0; i < BATCH; i++) {
      const key = receiverDedupKey(decodeId(from + b + i))!;
      keys[i] = key;
      rows[i] = d.admit(key, token, 1) as number;
    }
    for (let i = 0; i < BATCH; i++) d.onHandedOut(keys[i], token, rows[i]);
    for (let i = 0; i < BATCH; i++) d.onSettled(keys[i], ACCEPTED, 1, rows[i]);
  }
}

function decodeOnly(from: number, count: number): number {
  let sum = 0;
  for (let i = 0; i < count; i++) sum += decodeId(from + i).length;
  return sum;
}

const microseconds = (u: NodeJS.CpuUsage): number => u.user + u.system;

export async function run(opts: { log?: (line: string) => void } = {}) {
  const log = opts.log ?? console.log;
  const d: Window = colliding ? new ReceiverDedup({}, () => 7) : new ReceiverDedup();
  let next = 0;
  receive(d, next, 50_000);
  next += 50_000;
  const perMessage: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const d0 = cpuUsage();
    decodeOnly(next, n);
    const decode = microseconds(cpuUsage(d0));
    const w0 = cpuUsage();
    receive(d, next, n);
    const window = microseconds(cpuUsage(w0));
    next += n;
    perMessage.push(((window - decode) * 1000) / n);
  }
  perMessage.sort((a, b) => a - b);
  const median = perMessage[Math.floor(perMessage.length / 2)]!;
  log(
    `dedup window: ${median.toFixed(0)} ns/msg median (${perMessage[0]!.toFixed(0)}-${perMessage.at(-1)!.toFixed(0)}), ` +
      `${rounds} rounds of ${n}, remembered ${d.rememberedCount}${colliding ? ', colliding ids' : ''}, ` +
      `index fell back: ${d.indexFellBack}`,
  );
  return { nsPerMessage: median, range: [perMessage[0], perMessage.at(-1)], fellBack: d.indexFellBack };
}
