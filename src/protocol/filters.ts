/**
 * Source filter sets (part 3, 3.5.8: a map of filter name -> described filter value), and the
 * one filter type clients and broker share: the JMS selector filter as registered by Apache
 * (`apache.org:selector-filter:string`, code 0x0000468C:0x00000004), used by Qpid JMS, Proton
 * (`Selector`), Artemis and ActiveMQ.
 */
import { described, type Fields, isTyped, symbol } from '../codec/index.js';
import type { AmqpValue } from '../codec/values.js';

export const SELECTOR_FILTER = 'apache.org:selector-filter:string';
/** The numeric descriptor of the selector filter (domain 0x468C, id 4). */
export const SELECTOR_FILTER_CODE = 0x0000468c00000004n;
/** The filter-set key we send (Qpid JMS's); any key is accepted on the broker side. */
const SELECTOR_KEY = 'jms-selector';

/** One entry of a filter set, its descriptor normalised (symbol name, or ulong code as bigint). */
export interface FilterEntry {
  key: string;
  descriptor: string | bigint | undefined;
  value: AmqpValue;
  /** The entry as received (echoed back in the attach reply when in force). */
  raw: AmqpValue;
}

/** A filter set carrying one JMS selector. */
export function selectorFilter(selector: string): Fields {
  return { [SELECTOR_KEY]: described(symbol(SELECTOR_FILTER), selector) };
}

/** True when `entry` is a JMS selector filter (by symbol or by code). */
export function isSelectorFilter(entry: FilterEntry): boolean {
  return entry.descriptor === SELECTOR_FILTER || entry.descriptor === SELECTOR_FILTER_CODE;
}

/** The entries of a filter set in whatever shape it was decoded (plain object or Map). */
export function filterEntries(filter: unknown): FilterEntry[] {
  if (filter === undefined || filter === null) return [];
  const pairs: [unknown, AmqpValue][] =
    filter instanceof Map
      ? [...(filter as Map<unknown, AmqpValue>).entries()]
      : typeof filter === 'object'
        ? Object.entries(filter as Record<string, AmqpValue>)
        : [];
  return pairs.map(([k, raw]) => {
    const key = typeof k === 'string' ? k : isTyped(k) ? String(k.value) : String(k);
    if (isTyped(raw) && raw.type === 'described') {
      return { key, descriptor: descriptorOf(raw.descriptor), value: raw.value as AmqpValue, raw };
    }
    return { key, descriptor: undefined, value: raw, raw };
  });
}

function descriptorOf(d: AmqpValue): string | bigint | undefined {
  if (typeof d === 'string') return d;
  if (typeof d === 'number') return BigInt(d);
  if (typeof d === 'bigint') return d;
  if (isTyped(d)) return descriptorOf(d.value as AmqpValue);
  return undefined;
}
