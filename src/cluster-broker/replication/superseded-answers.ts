/**
 * A follower answers every append it takes, and one of its Readies often holds many answers: the
 * appends that arrived while its previous write was being made durable (a leader sends its new
 * entries at once, in many small appends). Each answer the leader reads acknowledges, may move
 * the commit and so sends a heartbeat or an append to every follower, which each answer in turn:
 * per-append work on both sides for what one answer says.
 *
 * So before a batch of messages goes out, an answer that a later one in the same batch fully
 * covers is left out:
 * - a successful append-response to the same leader in the same term whose `matchIndex` is at
 *   least as high ("I hold your log up to N" says everything "up to M <= N" does). Only those of
 *   a member that is not recovering: a recovering member's answers drive the leader's recovery
 *   rules (raft/core.ts), which see each one;
 * - a heartbeat-response to the same leader in the same term (they carry nothing else).
 *
 * Raft allows any message to be lost (the transport is best effort, replica-seams.ts, and the
 * simulation drops messages on purpose), so leaving an answer out can break no safety rule; the
 * last answer still goes, in the same batch, so the leader learns as much as it would have, once.
 */
import type { Message } from './raft/types.js';

/** `messages` without the answers a later one of the batch covers; the others in their order. */
export function withoutSupersededAnswers(messages: readonly Message[]): readonly Message[] {
  if (messages.length < 2) return messages;
  /** Per leader and term (`to term`), the highest matchIndex of the later acknowledgements kept. */
  const acked = new Map<string, number>();
  /** `to term` of the later heartbeat-responses kept. */
  const heard = new Set<string>();
  let dropped = 0;
  const keep = new Array<boolean>(messages.length);
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    keep[i] = true;
    if (m.type === 'append-response' && m.success && m.recovering !== true) {
      const key = `${m.to} ${m.term}`;
      const later = acked.get(key);
      if (later !== undefined && later >= m.matchIndex) keep[i] = false;
      else acked.set(key, m.matchIndex);
    } else if (m.type === 'heartbeat-response') {
      const key = `${m.to} ${m.term}`;
      if (heard.has(key)) keep[i] = false;
      else heard.add(key);
    }
    if (!keep[i]) dropped++;
  }
  return dropped === 0 ? messages : messages.filter((_, i) => keep[i]);
}
