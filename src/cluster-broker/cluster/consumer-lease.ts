/**
 * The leader's lease on other members' consumers: a member not heard from for `leaseMs` is taken
 * for gone, and its consumers are released so their messages go to others
 * (docs/cluster-member.md#consumer-lease).
 *
 * Silence is only judged over time this process was running: after it was itself stopped (a
 * stall of its event loop, a SIGSTOP, a loaded machine), its timers run before it reads what the
 * others sent meanwhile, so every member would look silent for the length of the stop. Releasing
 * a live member's consumers then hands their unsettled messages, accepts in flight included, to
 * that member's own links a second time.
 */
export class ConsumerLease {
  private readonly releasedAt = new Map<string, number>();

  constructor(private readonly leaseMs: number) {}

  /**
   * The members whose consumers to release now: among `holders` (members holding consumers or
   * owner links), those silent for a lease counted from `awakeSince` at the earliest (when this
   * process started or last resumed), and not already released within a lease.
   */
  due(
    holders: Iterable<string>,
    silentFor: (member: string) => number,
    awakeSince: number,
    now: number,
  ): Array<{ member: string; silentMs: number }> {
    const out: Array<{ member: string; silentMs: number }> = [];
    for (const member of holders) {
      const silentMs = Math.min(silentFor(member), now - awakeSince);
      if (silentMs < this.leaseMs || now - (this.releasedAt.get(member) ?? -Infinity) < this.leaseMs)
        continue;
      this.releasedAt.set(member, now);
      out.push({ member, silentMs });
    }
    return out;
  }
}
