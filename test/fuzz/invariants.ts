/**
 * What must hold for every fuzz case, whatever the input: the broker's output decodes, it never
 * reports an internal error or an unknown condition, it sends nothing after its Close and nothing
 * on a channel after its End there (until it begins that channel again), and the connection ends
 * within a bounded amount of (fake) time.
 */
import type { OutFrame, Peer } from './harness.js';

/** Every condition the spec defines (part 2, 2.8.15-2.8.18), except amqp:internal-error. */
export const PROTOCOL_CONDITIONS: ReadonlySet<string> = new Set([
  'amqp:not-found',
  'amqp:unauthorized-access',
  'amqp:decode-error',
  'amqp:resource-limit-exceeded',
  'amqp:not-allowed',
  'amqp:invalid-field',
  'amqp:not-implemented',
  'amqp:resource-locked',
  'amqp:precondition-failed',
  'amqp:resource-deleted',
  'amqp:illegal-state',
  'amqp:frame-size-too-small',
  'amqp:connection:forced',
  'amqp:connection:framing-error',
  'amqp:session:window-violation',
  'amqp:session:errant-link',
  'amqp:session:handle-in-use',
  'amqp:session:unattached-handle',
  'amqp:link:detach-forced',
  'amqp:link:transfer-limit-exceeded',
  'amqp:link:message-size-exceeded',
  'amqp:link:stolen',
]);

/** Problems with the broker's output, as readable strings (empty: fine). */
export function outputProblems(frames: readonly OutFrame[]): string[] {
  const problems: string[] = [];
  let closed = false;
  const endedChannels = new Set<number>();
  for (const f of frames) {
    if (f.kind === 'undecodable') {
      problems.push(`undecodable output: ${f.reason}`);
      continue;
    }
    if (f.kind === 'header') continue;
    if (closed) problems.push(`${describe(f)} after Close`);
    if (f.kind !== 'amqp') continue;
    const p = f.performative;
    // open and close belong to the connection (always channel 0), not to a session
    if (p.type === 'begin') endedChannels.delete(f.channel);
    else if (p.type !== 'close' && p.type !== 'open' && endedChannels.has(f.channel))
      problems.push(`${p.type} on channel ${f.channel} after its End`);
    if (p.type === 'end') endedChannels.add(f.channel);
    if (p.type === 'close') closed = true;
    if (p.type === 'close' || p.type === 'end' || p.type === 'detach') {
      const c = p.body.error?.condition;
      if (c !== undefined && !PROTOCOL_CONDITIONS.has(c)) problems.push(`${p.type} with condition ${c}`);
    }
  }
  return problems;
}

function describe(f: OutFrame): string {
  if (f.kind === 'amqp') return f.performative.type;
  if (f.kind === 'sasl') return f.performative.type;
  return f.kind;
}

/**
 * Runs the broker's timers with the fake clock until the connection ends; returns the fake ms it
 * took, or throws when it is still open after `boundMs` (a hang).
 */
export function runUntilEnded(p: Peer, boundMs: number, stepMs = 500): number {
  let waited = 0;
  while (!p.ended) {
    if (waited > boundMs) throw new Error(`connection still open after ${boundMs} ms of idle time`);
    p.advance(stepMs);
    waited += stepMs;
  }
  return waited;
}

/** Conditions the broker sent, by scope. */
export function sentConditions(p: Peer): { close?: string; end: string[]; detach: string[] } {
  const res: { close?: string; end: string[]; detach: string[] } = { end: [], detach: [] };
  for (const e of p.errors()) {
    const c = e.error?.condition;
    if (c === undefined) continue;
    if (e.scope === 'close') res.close = c;
    else res[e.scope].push(c);
  }
  return res;
}
