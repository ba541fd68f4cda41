/**
 * The benches' `--warm N`: messages sent (and received) before the measured rounds, not counted.
 * One rule for all of them: by default a tenth of a round, at least 100; a warm-up as large as a
 * round measures the brokers at steady state (docs/benchmarks.md#e2e-warm-up).
 */

/** The value of `--warm` on a command line, checked; undefined when absent. */
export function parseWarm(raw: string | undefined): number | undefined {
  return parseCountOption('--warm', raw);
}

/** The value of a count option (`--warm`, `--repeat`), a positive whole number; undefined when absent. */
export function parseCountOption(flag: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const count = Number(raw);
  if (!Number.isSafeInteger(count) || count < 1)
    throw new Error(`${flag} takes a positive whole number, not ${JSON.stringify(raw)}`);
  return count;
}

/** The warm-up when none is given: a tenth of a round of `messages`, at least 100. */
export function defaultWarm(messages: number): number {
  return Math.max(100, Math.floor(messages / 10));
}

/**
 * How many times a warm-up runs a bench's rounds. Rounds that share the broker's code (the topics
 * bench's topic, queues and sends rounds: links, store, output) need two passes: after one, the
 * first measured topic round (the first to follow the queues and sends rounds) was the dearest of
 * every run (docs/benchmarks.md#topic-first-repeat).
 */
export const WARM_PASSES = 2;

/** A bench's warm-up: its `rounds` in their measured order, `passes` times over. */
export async function warmUpPasses<R>(
  rounds: readonly R[],
  run: (round: R, pass: number) => Promise<void>,
  passes = WARM_PASSES,
): Promise<void> {
  for (let pass = 1; pass <= passes; pass++) for (const round of rounds) await run(round, pass);
}
