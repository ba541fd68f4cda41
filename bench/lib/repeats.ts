/**
 * The benches' `--repeat N`: the measured rounds run N times on the same brokers (after the one
 * warm-up), and a target figure is judged on its median over the repeats, with their range, not
 * on one run's value (on a shared 2-core machine one run's ratio swings by a fifth).
 */
import { median } from './isolated-rate.js';
import { parseCountOption } from './warm-option.js';

/** The value of `--repeat` on a command line, checked; undefined when absent. */
export function parseRepeat(raw: string | undefined): number | undefined {
  return parseCountOption('--repeat', raw);
}

/** A figure over the repeats: its median and its range. */
export interface Spread {
  median: number;
  min: number;
  max: number;
}

/** The median and range of the repeats' values that were read (null ones skipped); null if none was. */
export function spread(values: readonly (number | null)[]): Spread | null {
  const known = values.filter((v): v is number => v !== null);
  if (known.length === 0) return null;
  return { median: median(known), min: Math.min(...known), max: Math.max(...known) };
}

/** `2.05 (1.95-2.40)`: the median and the range, each rounded to `digits` decimals; `-` for null. */
export function formatSpread(s: Spread | null, digits: number): string {
  if (s === null) return '-';
  const f = (x: number) => x.toFixed(digits);
  return `${f(s.median)} (${f(s.min)}-${f(s.max)})`;
}
