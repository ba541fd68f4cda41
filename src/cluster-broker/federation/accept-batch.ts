/**
 * A link's accepts upstream, sent in batches (docs/federation.md#cost). Every accept the upstream
 * gets in a frame of its own becomes a settle entry of its own there, replicated to its members
 * in an append round of its own; local commits resolve in small batches (one per commit round
 * here), so accepting each move as soon as it commits would cost the upstream one round per local
 * commit round. Instead, accepts wait while a batch is unconfirmed, and all that waited go out
 * together (in one frame, as a range) once the upstream confirmed the previous batch: the
 * upstream settles as many moves per round as arrive meanwhile, and an idle link still accepts
 * at once. The order of the move is untouched: a delivery is only handed here after its local
 * commit (move.ts), and each caller still waits for its own delivery's confirmation.
 */
import type { Delivery } from './upstream-client.js';

/** Batches of accepts unconfirmed upstream at most; later accepts wait for one to be confirmed. */
const UNCONFIRMED_BATCHES = 1;

interface WaitingAccept {
  d: Delivery;
  resolve: () => void;
  reject: (err: unknown) => void;
}

export class AcceptBatches {
  private waiting: WaitingAccept[] = [];
  /** Batches sent whose confirmations (or failures) have not all come yet. */
  private unconfirmed = 0;
  private scheduled = false;

  /** `beforeSend`: runs just before a batch goes out (the link tops its credit up in the same frame). */
  constructor(private readonly beforeSend: () => void) {}

  /** Accepts `d` upstream with the next batch; resolves once the upstream confirmed it. */
  accept(d: Delivery): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ d, resolve, reject });
      this.schedule();
    });
  }

  /**
   * Sends the waiting accepts after the current turn (every local commit of one round resolves
   * in it) unless a batch is still unconfirmed: its confirmation sends them.
   */
  private schedule(): void {
    if (this.scheduled || this.unconfirmed >= UNCONFIRMED_BATCHES || this.waiting.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.send();
    });
  }

  private send(): void {
    const batch = this.waiting;
    if (batch.length === 0) return;
    this.waiting = [];
    this.unconfirmed++;
    this.beforeSend();
    let left = batch.length;
    const answered = (): void => {
      if (--left > 0) return;
      this.unconfirmed--;
      this.schedule();
    };
    for (const w of batch)
      w.d.accept().then(
        () => {
          w.resolve();
          answered();
        },
        (err: unknown) => {
          w.reject(err);
          answered();
        },
      );
  }
}
