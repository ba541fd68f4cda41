/**
 * `npm run limits -- [--scale 1] [--connections N] [--links N] [--messages N] [--body-bytes N]`
 * Runs the limits-under-load scenario (see limits.ts) against a real broker process and prints
 * one JSON summary on stdout (progress on stderr). Exit 0 when the broker stayed responsive and
 * within its memory budget and stopped cleanly, 1 otherwise.
 */
import { parseArgs } from 'node:util';
import { runLimits } from './limits.js';

const { values } = parseArgs({
  options: {
    scale: { type: 'string', default: '1' },
    connections: { type: 'string' },
    links: { type: 'string' },
    messages: { type: 'string' },
    'body-bytes': { type: 'string' },
  },
});
const num = (v: string | undefined): number | undefined => (v === undefined ? undefined : Number(v));
const summary = await runLimits({
  scale: Number(values.scale),
  connections: num(values.connections),
  links: num(values.links),
  messages: num(values.messages),
  bodyBytes: num(values['body-bytes']),
  log: (line) => process.stderr.write(`[limits] ${line}\n`),
});
process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
process.exitCode = summary.ok ? 0 : 1;
