/**
 * LIKE patterns matched in linear time (docs/broker-features.md#selector-limits): the pattern is
 * a small NFA (one state per literal, `_` or `%`) simulated bit-parallel over the value, one code
 * point at a time, so the cost is O(value length x pattern length / 32) whatever the input, never
 * the exponential backtracking a regular expression engine does on `%a%a%a%b`.
 */
import { SelectorError } from './errors.js';

const BITS = 32;

/** A compiled LIKE pattern: `%` any run, `_` one character, the escape character quoting the next. */
export class LikePattern {
  /** Bit j set: state j is a `%` (loops on any character). */
  private readonly anyMask: Uint32Array;
  /** Bit j set: state j is a `_` (consumes any one character). */
  private readonly oneMask: Uint32Array;
  /** Per literal code point: the states that consume it. */
  private readonly literal = new Map<number, Uint32Array>();
  /** States 0..length: state `length` is the accepting one. */
  private readonly length: number;
  private readonly words: number;

  constructor(pattern: string, escapeChar: string | undefined) {
    const steps: Array<number | '%' | '_'> = [];
    const chars = [...pattern];
    for (let i = 0; i < chars.length; i++) {
      const c = chars[i]!;
      if (escapeChar !== undefined && c === escapeChar) {
        const next = chars[++i];
        if (next === undefined) throw new SelectorError('LIKE pattern ends with its escape character');
        steps.push(next.codePointAt(0)!);
      } else if (c === '%') {
        // %% is %: one looping state keeps the epsilon closure a single shift
        if (steps[steps.length - 1] !== '%') steps.push('%');
      } else if (c === '_') steps.push('_');
      else steps.push(c.codePointAt(0)!);
    }
    this.length = steps.length;
    this.words = Math.floor(steps.length / BITS) + 1;
    this.anyMask = new Uint32Array(this.words);
    this.oneMask = new Uint32Array(this.words);
    steps.forEach((s, j) => {
      const mask = s === '%' ? this.anyMask : s === '_' ? this.oneMask : this.literalMask(s);
      mask[j >>> 5]! |= 1 << (j & 31);
    });
  }

  private literalMask(codePoint: number): Uint32Array {
    let mask = this.literal.get(codePoint);
    if (mask === undefined) {
      mask = new Uint32Array(this.words);
      this.literal.set(codePoint, mask);
    }
    return mask;
  }

  /** True when the whole of `value` matches the pattern. */
  test(value: string): boolean {
    const { words, anyMask, oneMask } = this;
    let active = new Uint32Array(words);
    let next = new Uint32Array(words);
    active[0] = 1;
    this.closure(active);
    for (let i = 0; i < value.length; ) {
      const cp = value.codePointAt(i)!;
      i += cp > 0xffff ? 2 : 1;
      const lit = this.literal.get(cp);
      let carry = 0;
      let any = 0;
      for (let w = 0; w < words; w++) {
        const a = active[w]!;
        // a state that consumes this character moves to the next state; a `%` also stays
        const consumes = a & (oneMask[w]! | (lit === undefined ? 0 : lit[w]!));
        next[w] = ((consumes << 1) | carry | (a & anyMask[w]!)) >>> 0;
        carry = consumes >>> 31;
        any |= next[w]!;
      }
      if (any === 0) return false;
      this.closure(next);
      [active, next] = [next, active];
    }
    return (active[this.length >>> 5]! & (1 << (this.length & 31))) !== 0;
  }

  /** A `%` state also stands for the state after it (it may match nothing). */
  private closure(states: Uint32Array): void {
    let carry = 0;
    for (let w = 0; w < this.words; w++) {
      const loops = states[w]! & this.anyMask[w]!;
      const moved = ((loops << 1) | carry) >>> 0;
      carry = loops >>> 31;
      states[w] = (states[w]! | moved) >>> 0;
    }
  }
}
