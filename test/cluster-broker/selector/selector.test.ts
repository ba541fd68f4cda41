/**
 * The JMS selector parser and evaluator: examples from the JMS specification, three-valued logic,
 * JMS header names over AMQP messages, clear errors, and property tests of the algebra (generated
 * expressions printed to text, parsed back, evaluated against a direct evaluation in JavaScript).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  evaluate,
  likePattern,
  parseSelector,
  Selector,
  SelectorError,
  type SelectorValue,
} from '../../../src/cluster-broker/selector/index.js';
import { encodeMessage, type Message, symbol, ulong, uuid } from '../../../src/codec/index.js';

const props = (p: Record<string, SelectorValue>) => (name: string) => (name in p ? p[name]! : null);
const run = (text: string, p: Record<string, SelectorValue> = {}) => evaluate(parseSelector(text), props(p));
const matches = (text: string, m: Message) => new Selector(text).matches(encodeMessage(m));

describe('selector language', () => {
  it('comparisons, AND/OR/NOT and precedence', () => {
    expect(run("colour = 'green'", { colour: 'green' })).toBe(true);
    expect(run("colour = 'green'", { colour: 'red' })).toBe(false);
    expect(run("colour <> 'green' AND weight > 2.5", { colour: 'red', weight: 3 })).toBe(true);
    expect(run('a = 1 OR b = 2 AND c = 3', { a: 1, b: 0, c: 0 })).toBe(true);
    expect(run('(a = 1 OR b = 2) AND c = 3', { a: 1, b: 0, c: 0 })).toBe(false);
    expect(run('NOT a = 1', { a: 2 })).toBe(true);
    expect(run('a >= 1 AND a <= 1 AND a < 2 AND a > 0', { a: 1 })).toBe(true);
    expect(run('flag', { flag: true })).toBe(true);
    expect(run('flag = TRUE', { flag: false })).toBe(false);
  });

  it('arithmetic with JMS precedence; keywords are case-insensitive', () => {
    expect(run('a + b * 2 = 7', { a: 1, b: 3 })).toBe(true);
    expect(run('(a + b) * 2 = 8', { a: 1, b: 3 })).toBe(true);
    expect(run('-a = -1 and a / 2 = 0.5', { a: 1 })).toBe(true);
    expect(run('x = 1e3 AND y = 0x1F AND z = 7L', { x: 1000, y: 31, z: 7 })).toBe(true);
  });

  it('LIKE with % and _, ESCAPE, NOT LIKE', () => {
    expect(run("phone LIKE '12%3'", { phone: '123' })).toBe(true);
    expect(run("phone LIKE '12%3'", { phone: '12993' })).toBe(true);
    expect(run("phone LIKE '12%3'", { phone: '1234' })).toBe(false);
    expect(run("word LIKE 'l_se'", { word: 'lose' })).toBe(true);
    expect(run("word LIKE 'l_se'", { word: 'loose' })).toBe(false);
    expect(run("u LIKE '\\_%' ESCAPE '\\'", { u: '_foo' })).toBe(true);
    expect(run("u LIKE '\\_%' ESCAPE '\\'", { u: 'bar' })).toBe(false);
    expect(run("u NOT LIKE 'a.c'", { u: 'abc' })).toBe(true);
    expect(run("u LIKE '(x)+'", { u: '(x)+' })).toBe(true);
  });

  it('IN, BETWEEN, IS [NOT] NULL', () => {
    expect(run("country IN ('UK', 'US', 'France')", { country: 'UK' })).toBe(true);
    expect(run("country NOT IN ('UK', 'US')", { country: 'Peru' })).toBe(true);
    expect(run('age BETWEEN 15 AND 19', { age: 15 })).toBe(true);
    expect(run('age NOT BETWEEN 15 AND 19', { age: 20 })).toBe(true);
    expect(run('prop IS NULL')).toBe(true);
    expect(run('prop IS NOT NULL', { prop: 'x' })).toBe(true);
  });

  it('unknown (null) follows SQL three-valued logic; a match needs TRUE', () => {
    expect(run('missing = 1')).toBe(null);
    expect(run('NOT missing = 1')).toBe(null);
    expect(run('missing = 1 AND 1 = 2')).toBe(false);
    expect(run('missing = 1 OR 1 = 1')).toBe(true);
    expect(run("missing IN ('a')")).toBe(null);
    expect(run("missing LIKE 'a%'")).toBe(null);
    expect(run('missing + 1 = 2')).toBe(null);
    expect(new Selector('missing = 1').matches(encodeMessage({ body: 'x' }))).toBe(false);
    expect(new Selector('NOT missing = 1').matches(encodeMessage({ body: 'x' }))).toBe(false);
  });

  it('values of different types are never equal; strings and booleans only compare with = and <>', () => {
    expect(run("a = '1'", { a: 1 })).toBe(false);
    expect(run("a <> '1'", { a: 1 })).toBe(false);
    expect(run("s < 'b'", { s: 'a' })).toBe(null);
    expect(run('b = TRUE', { b: true })).toBe(true);
    expect(run('a / 0 = 1', { a: 1 })).toBe(null);
  });

  it('reads JMS header names and application-properties from an AMQP message', () => {
    const m: Message = {
      messageId: 'id-1',
      correlationId: ulong(42),
      priority: 7,
      durable: true,
      subject: 'the-subject',
      to: 'orders',
      replyTo: '$temp/x',
      groupId: 'g',
      groupSequence: 3,
      creationTime: new Date(1_000),
      messageAnnotations: { 'x-opt-jms-type': 'OrderType' },
      applicationProperties: { colour: 'green', weight: 2.5, count: ulong(5), tag: symbol('s') },
      body: 'x',
    };
    expect(matches("JMSMessageID = 'id-1' AND JMSCorrelationID = '42'", m)).toBe(true);
    expect(matches("JMSPriority > 5 AND JMSDeliveryMode = 'PERSISTENT'", m)).toBe(true);
    expect(
      matches("JMSType = 'OrderType' AND JMSDestination = 'orders' AND JMSReplyTo LIKE '$temp/%'", m),
    ).toBe(true);
    expect(matches("JMSXGroupID = 'g' AND JMSXGroupSeq = 3 AND JMSTimestamp = 1000", m)).toBe(true);
    expect(matches('JMSRedelivered = FALSE AND JMSXDeliveryCount = 1', m)).toBe(true);
    expect(matches("colour = 'green' AND weight BETWEEN 2 AND 3 AND count = 5 AND tag = 's'", m)).toBe(true);
    expect(matches('JMSPriority = 4', { body: 'no header' })).toBe(true);
    expect(matches("JMSType = 'T'", { subject: 'T' })).toBe(true);
    expect(
      matches("JMSMessageID = 'a1b2c3d4-0000-4000-8000-000000000000'", {
        messageId: uuid('a1b2c3d4-0000-4000-8000-000000000000'),
      }),
    ).toBe(true);
  });

  it('refuses malformed selectors with a clear error naming the position', () => {
    const bad: Array<[string, RegExp]> = [
      ["colour = 'green", /unterminated string starting at 9/],
      ['colour = ', /expected a value, an identifier or \( at 9, found the end/],
      ['a = 1 AND', /expected a value/],
      ['a BETWEEN 1 2', /expected AND of BETWEEN/],
      ['a LIKE 5', /expected a string pattern after LIKE/],
      ["a LIKE 'x' ESCAPE 'ab'", /one-character string after ESCAPE/],
      ['a IN ()', /expected a literal/],
      ['a IS 5', /expected NULL after IS/],
      ['a # 1', /unexpected '#' at 2/],
      ['1 + 2', /must be a conditional expression/],
      ['(a = 1', /expected '\)'/],
      ['a = 1 b', /expected the end of the selector at 6, found 'b'/],
    ];
    for (const [text, why] of bad) {
      let err: unknown;
      try {
        parseSelector(text);
      } catch (e) {
        err = e;
      }
      expect(err, text).toBeInstanceOf(SelectorError);
      expect((err as SelectorError).condition).toBe('amqp:invalid-field');
      expect((err as SelectorError).description, text).toMatch(why);
    }
  });
});

// ---- property tests: generated expressions, printed, parsed back, evaluated both ways ----

type Env = Record<string, SelectorValue>;
interface Gen {
  text: string;
  /** The value the expression must have, computed directly in JavaScript with SQL's 3VL. */
  value: (env: Env) => SelectorValue;
}

const NAMES = ['a', 'b', 's', 'flag', 'missing'];
const num = fc.integer({ min: -50, max: 50 });
const text = fc.stringMatching(/^[a-c%_' ]{0,5}$/);

const and3 = (l: SelectorValue, r: SelectorValue): SelectorValue =>
  l === false || r === false ? false : l === true && r === true ? true : null;
const or3 = (l: SelectorValue, r: SelectorValue): SelectorValue =>
  l === true || r === true ? true : l === false && r === false ? false : null;
const not3 = (v: SelectorValue): SelectorValue => (typeof v === 'boolean' ? !v : null);
const quoteStr = (s: string) => `'${s.replace(/'/g, "''")}'`;

const numExpr: fc.Arbitrary<Gen> = fc.letrec<{ n: Gen }>((tie) => ({
  n: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    num.map((v) => ({ text: v < 0 ? `(${v})` : String(v), value: () => v })),
    fc.constantFrom('a', 'b', 'missing').map((id) => ({
      text: id,
      value: (env: Env) => (typeof env[id] === 'number' ? env[id] : null),
    })),
    fc.tuple(tie('n'), fc.constantFrom('+', '-', '*'), tie('n')).map(([l, op, r]) => ({
      text: `(${l.text} ${op} ${r.text})`,
      value: (env: Env) => {
        const x = l.value(env);
        const y = r.value(env);
        if (typeof x !== 'number' || typeof y !== 'number') return null;
        return op === '+' ? x + y : op === '-' ? x - y : x * y;
      },
    })),
  ),
})).n;

const cmp = (op: string, x: SelectorValue, y: SelectorValue): SelectorValue => {
  if (x === null || y === null) return null;
  if (typeof x !== typeof y) return false;
  if (typeof x === 'number' && typeof y === 'number') {
    return { '=': x === y, '<>': x !== y, '<': x < y, '<=': x <= y, '>': x > y, '>=': x >= y }[op]!;
  }
  return op === '=' ? x === y : op === '<>' ? x !== y : null;
};

const boolExpr: fc.Arbitrary<Gen> = fc.letrec<{ b: Gen }>((tie) => ({
  b: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.tuple(numExpr, fc.constantFrom('=', '<>', '<', '<=', '>', '>='), numExpr).map(([l, op, r]) => ({
      text: `${l.text} ${op} ${r.text}`,
      value: (env: Env) => cmp(op, l.value(env), r.value(env)),
    })),
    fc.tuple(numExpr, numExpr, numExpr, fc.boolean()).map(([e, lo, hi, not]) => ({
      text: `${e.text} ${not ? 'NOT ' : ''}BETWEEN ${lo.text} AND ${hi.text}`,
      value: (env: Env) => {
        const v = and3(cmp('>=', e.value(env), lo.value(env)), cmp('<=', e.value(env), hi.value(env)));
        return not ? not3(v) : v;
      },
    })),
    fc
      .tuple(fc.constantFrom('s', 'missing'), fc.array(text, { minLength: 1, maxLength: 3 }), fc.boolean())
      .map(([id, list, not]) => ({
        text: `${id} ${not ? 'NOT ' : ''}IN (${list.map(quoteStr).join(', ')})`,
        value: (env: Env) => {
          const v = env[id];
          if (typeof v !== 'string') return null;
          return list.includes(v) !== not;
        },
      })),
    fc.tuple(fc.constantFrom(...NAMES), fc.boolean()).map(([id, not]) => ({
      text: `${id} IS ${not ? 'NOT ' : ''}NULL`,
      value: (env: Env) => (env[id] === null || env[id] === undefined) !== not,
    })),
    fc.constantFrom('flag', 'TRUE', 'FALSE').map((t) => ({
      text: t,
      value: (env: Env) =>
        t === 'TRUE' ? true : t === 'FALSE' ? false : typeof env.flag === 'boolean' ? env.flag : null,
    })),
    tie('b').map((e) => ({ text: `NOT (${e.text})`, value: (env: Env) => not3(e.value(env)) })),
    fc.tuple(tie('b'), fc.constantFrom('AND', 'OR'), tie('b')).map(([l, op, r]) => ({
      text: `(${l.text}) ${op} (${r.text})`,
      value: (env: Env) => (op === 'AND' ? and3 : or3)(l.value(env), r.value(env)),
    })),
  ),
})).b;

const env: fc.Arbitrary<Env> = fc.record({
  a: fc.oneof(num, fc.constant(null)),
  b: fc.oneof(num, fc.constant(null)),
  s: fc.oneof(text, fc.constant(null)),
  flag: fc.oneof(fc.boolean(), fc.constant(null)),
  missing: fc.constant(null),
});

describe('selector properties', () => {
  it('a generated expression, printed and parsed, evaluates as JavaScript computes it (3VL)', () => {
    fc.assert(
      fc.property(boolExpr, env, (g, e) => {
        expect(evaluate(parseSelector(g.text), props(e))).toBe(g.value(e));
      }),
      { numRuns: 500 },
    );
  });

  it('LIKE: a pattern made from a string by wildcards matches it; an escaped wildcard only matches itself', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom('a', 'b', '%', '_', '.', '*', '\\'), maxLength: 8 }),
        fc.array(fc.constantFrom('keep', 'one', 'run'), { maxLength: 8 }),
        (s, how) => {
          let pattern = '';
          for (let i = 0; i < s.length; i++) {
            const c = s[i]!;
            const h = how[i] ?? 'keep';
            if (h === 'one') pattern += '_';
            else if (h === 'run') pattern += '%';
            else pattern += c === '%' || c === '_' || c === '!' ? `!${c}` : c;
          }
          expect(likePattern(pattern, '!').test(s)).toBe(true);
          // every wildcard escaped: matches exactly the string itself
          const exact = s.replace(/[%_!]/g, (c) => `!${c}`);
          expect(likePattern(exact, '!').test(s)).toBe(true);
          expect(likePattern(exact, '!').test(`${s}x`)).toBe(false);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('never throws on arbitrary input other than SelectorError', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 30 }), (s) => {
        try {
          parseSelector(s);
        } catch (e) {
          expect(e).toBeInstanceOf(SelectorError);
        }
      }),
      { numRuns: 1000 },
    );
  });
});
