/**
 * Selectors cost bounded work (docs/broker-features.md#selector-limits): LIKE matches in linear
 * time (the pathological patterns that make a backtracking regular expression run for minutes
 * finish here, and agree with a regular expression on small inputs), and over-long or over-deep
 * selectors are refused with a SelectorError naming the limit, never a stack overflow.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  likePattern,
  MAX_SELECTOR_DEPTH,
  MAX_SELECTOR_LENGTH,
  parseSelector,
  Selector,
  SelectorError,
} from '../../../src/cluster-broker/selector/index.js';
import { encodeMessage } from '../../../src/codec/index.js';

/** The textbook translation of a LIKE pattern to a regular expression: the reference semantics. */
function referenceRegex(pattern: string, escapeChar: string | undefined): RegExp {
  let re = '';
  const chars = [...pattern];
  const quote = (c: string) => c.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!;
    if (escapeChar !== undefined && c === escapeChar) re += quote(chars[++i]!);
    else if (c === '%') re += '[\\s\\S]*';
    else if (c === '_') re += '[\\s\\S]';
    else re += quote(c);
  }
  return new RegExp(`^${re}$`, 'u');
}

function refusal(text: string): SelectorError {
  try {
    parseSelector(text);
  } catch (err) {
    expect(err).toBeInstanceOf(SelectorError);
    return err as SelectorError;
  }
  throw new Error(`accepted: ${text.slice(0, 80)}`);
}

describe('LIKE in linear time', () => {
  it('answers the patterns that make a backtracking matcher run for minutes', () => {
    // with a regular expression, 8 x %a against 60 x a ran for 416 s (issue 31)
    const value = 'a'.repeat(60);
    expect(likePattern(`${'%a'.repeat(8)}%b`, undefined).test(value)).toBe(false);
    expect(likePattern(`${'%a'.repeat(8)}%`, undefined).test(value)).toBe(true);
    const long = 'a'.repeat(200_000);
    expect(likePattern(`${'%a'.repeat(40)}%b`, undefined).test(long)).toBe(false);
    expect(likePattern(`%${'a'.repeat(300)}b%`, undefined).test(long)).toBe(false);
    expect(likePattern(`%${'_'.repeat(300)}a`, undefined).test(long)).toBe(true);
    const selector = new Selector(`s LIKE '${'%a'.repeat(20)}%b'`);
    expect(selector.matches(encodeMessage({ applicationProperties: { s: long }, body: 'x' }))).toBe(false);
  });

  it('agrees with a regular expression on small inputs (wildcards, escapes, astral characters)', () => {
    const unit = fc.constantFrom('a', 'b', '%', '_', '!', '.', '😀', '\n');
    fc.assert(
      fc.property(
        fc.string({ unit, maxLength: 10 }),
        fc.string({ unit: fc.constantFrom('a', 'b', '.', '😀', '\n', '%', '_'), maxLength: 12 }),
        fc.boolean(),
        (rawPattern, value, escaped) => {
          // a trailing lone escape character is refused, as the parser refuses it
          const pattern = escaped && /(^|[^!])(!!)*!$/.test(rawPattern) ? `${rawPattern}a` : rawPattern;
          const esc = escaped ? '!' : undefined;
          expect(likePattern(pattern, esc).test(value)).toBe(referenceRegex(pattern, esc).test(value));
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('works across the 32-state word boundary', () => {
    for (const n of [30, 31, 32, 33, 63, 64, 65, 100]) {
      const exact = 'ab'.repeat(n);
      expect(likePattern(exact, undefined).test(exact), `${n}`).toBe(true);
      expect(likePattern(`${exact}%`, undefined).test(`${exact}zz`), `${n}`).toBe(true);
      expect(likePattern(`%${'_'.repeat(n)}`, undefined).test('x'.repeat(n - 1)), `${n}`).toBe(false);
      expect(likePattern(`${'a%'.repeat(n)}b`, undefined).test(`${'a'.repeat(n)}b`), `${n}`).toBe(true);
    }
  });
});

describe('selector limits', () => {
  it(`refuses a selector longer than ${MAX_SELECTOR_LENGTH} characters`, () => {
    const ok = `s = '${'x'.repeat(MAX_SELECTOR_LENGTH - 6)}'`;
    expect(ok.length).toBe(MAX_SELECTOR_LENGTH);
    expect(() => parseSelector(ok)).not.toThrow();
    const err = refusal(`s = '${'x'.repeat(MAX_SELECTOR_LENGTH - 5)}'`);
    expect(err.condition).toBe('amqp:invalid-field');
    expect(err.description).toMatch(`longer than ${MAX_SELECTOR_LENGTH} characters`);
  });

  it(`refuses nesting deeper than ${MAX_SELECTOR_DEPTH} levels, never overflowing the stack`, () => {
    const deepParens = `${'('.repeat(2000)}a = 1${')'.repeat(2000)}`;
    expect(refusal(deepParens).description).toMatch(`nested deeper than ${MAX_SELECTOR_DEPTH} levels`);
    expect(refusal(`${'NOT '.repeat(MAX_SELECTOR_DEPTH + 1)}a = 1`).description).toMatch(/nested deeper/);
    expect(refusal(`a = ${'-'.repeat(2000)}1`).description).toMatch(/nested deeper/);
    // a chain of ORs grows the tree without recursion in the parser: still bounded
    expect(refusal(Array.from({ length: 200 }, (_, i) => `a = ${i}`).join(' OR ')).description).toMatch(
      /nested deeper/,
    );
    expect(() => parseSelector(`${'('.repeat(20)}a = 1${')'.repeat(20)}`)).not.toThrow();
    expect(() => parseSelector(Array.from({ length: 50 }, (_, i) => `a = ${i}`).join(' OR '))).not.toThrow();
  });
});
