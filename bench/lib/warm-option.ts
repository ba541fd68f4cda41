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
