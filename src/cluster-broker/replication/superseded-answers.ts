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
 *   rules (raft/recovery.ts), which see each one;
 * - a heartbeat-response to the same leader in the same term (they carry nothing else).
 *
 * Raft allows any message to be lost (the transport is best effort, replica-seams.ts, and the
 * simulation drops messages on purpose), so leaving an answer out can break no safety rule; the
 * last answer still goes, in the same batch, so the leader learns as much as it would have, once.
 */
import type { Message } from './raft/types.js';

/**
 * `messages` without the answers a later one of the batch covers; the others in their order.
 *
 * A follower answers one leader per term, so the answers of a batch share one `to` and `term`
 * but across a term change: the walk from the end compares each answer with the last one kept of
 * its kind, field by field (no key built per answer: this runs on every Ready). An answer to
 * another leader or term is kept and becomes the one compared with; with answers to two leaders
 * interleaved some covered ones would go out too, which costs a message and breaks nothing.
 */
export function withoutSupersededAnswers(messages: readonly Message[]): readonly Message[] {
  if (messages.length < 2) return messages;
  /** The latest successful acknowledgement kept so far (walking from the end). */
  let ackTo: string | undefined;
  let ackTerm = -1;
  let ackMatch = -1;
  /** The latest heartbeat-response kept so far. */
  let heardTo: string | undefined;
  let heardTerm = -1;
  let keep: boolean[] | undefined;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    let covered = false;
    if (m.type === 'append-response' && m.success && m.recovering !== true) {
      if (m.to === ackTo && m.term === ackTerm && ackMatch >= m.matchIndex) covered = true;
      else {
        ackTo = m.to;
        ackTerm = m.term;
        ackMatch = m.matchIndex;
      }
    } else if (m.type === 'heartbeat-response') {
      if (m.to === heardTo && m.term === heardTerm) covered = true;
      else {
        heardTo = m.to;
        heardTerm = m.term;
      }
    }
    if (covered) {
      keep ??= new Array<boolean>(messages.length).fill(true);
      keep[i] = false;
    }
  }
  return keep === undefined ? messages : messages.filter((_, i) => keep[i]);
}
