/**
 * Slows password guessing: each failed SASL attempt from a source address is answered after a
 * delay that doubles with the address's recent failures, up to a bound; the failure count halves
 * every `halfLifeMs` without failures. The delay is a timer on the failing connection only: other
 * connections, from that address or any other, are never held up.
 */

/** Tuning of the failed-login delay; every field is optional. */
export interface AuthThrottleOptions {
  /** Delay of the first failure. Default 100 ms. */
  baseDelayMs?: number;
  /** Largest delay. Default 5_000 ms. */
  maxDelayMs?: number;
  /** A quiet address's failure count halves this often. Default 30_000 ms. */
  halfLifeMs?: number;
  /** Addresses remembered at most (the least recently failing are forgotten). Default 10_000. */
  maxAddresses?: number;
}

interface Record {
  score: number;
  at: number;
}

export class AuthThrottle {
  private readonly base: number;
  private readonly max: number;
  private readonly halfLife: number;
  private readonly maxAddresses: number;
  private readonly byAddress = new Map<string, Record>();

  constructor(o: AuthThrottleOptions = {}) {
    this.base = o.baseDelayMs ?? 100;
    this.max = o.maxDelayMs ?? 5_000;
    this.halfLife = o.halfLifeMs ?? 30_000;
    this.maxAddresses = o.maxAddresses ?? 10_000;
  }

  /** Records a failure from `address` at `now`; returns how long to wait before answering it. */
  failure(address: string, now: number): number {
    const score = this.decayed(address, now) + 1;
    // re-inserted at the end: Map order is then least recently failing first
    this.byAddress.delete(address);
    this.byAddress.set(address, { score, at: now });
    while (this.byAddress.size > this.maxAddresses) {
      const oldest = this.byAddress.keys().next().value as string;
      this.byAddress.delete(oldest);
    }
    return Math.min(this.max, Math.round(this.base * 2 ** (score - 1)));
  }

  /** Recent failures of `address` (decayed), for logs and tests. */
  decayed(address: string, now: number): number {
    const r = this.byAddress.get(address);
    if (r === undefined) return 0;
    return r.score * 0.5 ** (Math.max(0, now - r.at) / this.halfLife);
  }
}
