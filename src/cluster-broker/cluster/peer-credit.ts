/**
 * The unused consumer credit of federated queues on the other members, as their status messages
 * (every 100 ms) last said: the member running a federation link grants upstream credit for the
 * whole cluster's idle consumers, not only its own (docs/federation.md#cluster). A report older
 * than `freshMs` counts as none: a silent member's consumers ask for nothing.
 */
export class PeerCredit {
  private readonly byPeer = new Map<string, { credit: Record<string, number>; at: number }>();

  constructor(private readonly freshMs = 1000) {}

  /** A status message from `peer` arrived at `now` (its credit, or none). */
  note(peer: string, credit: Record<string, number> | undefined, now: number): void {
    if (credit === undefined) this.byPeer.delete(peer);
    else this.byPeer.set(peer, { credit, at: now });
  }

  /** The fresh reports' unused credit for `queue`. */
  total(queue: string, now: number): number {
    let sum = 0;
    for (const { credit, at } of this.byPeer.values()) {
      const n = credit[queue];
      if (now - at <= this.freshMs && typeof n === 'number' && n > 0) sum += n;
    }
    return sum;
  }
}
