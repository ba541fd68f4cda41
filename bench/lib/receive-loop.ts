/**
 * The receive loop the benches measure: `count` deliveries, each accepted without waiting for the
 * outcome, taken with batch receives of up to `window` or with `for await`.
 */

/** What the loop needs of our Receiver (structural: bench/lib/clients.ts imports the client lazily). */
export interface AcceptingReceiver extends AsyncIterable<{ accept(): Promise<void> }> {
  receive(o: { max: number; timeoutMs: number }): Promise<Array<{ accept(): Promise<void> }>>;
}

export async function receiveAccepting(
  receiver: AcceptingReceiver,
  count: number,
  mode: 'iterator' | 'batch',
  window: number,
): Promise<void> {
  let got = 0;
  if (mode === 'batch') {
    while (got < count) {
      const batch = await receiver.receive({ max: window, timeoutMs: 60_000 });
      for (const d of batch) void d.accept();
      got += batch.length;
    }
    return;
  }
  for await (const d of receiver) {
    void d.accept();
    if (++got === count) break;
  }
}
