/**
 * Evaluating a parsed selector with SQL three-valued logic: null is "unknown"; a comparison or
 * arithmetic with an unknown operand is unknown; NOT unknown is unknown; AND is false if either
 * side is false, OR true if either is true. A message matches only when the result is TRUE.
 *
 * Types (JMS 2.0, 3.8.1.2): numbers compare and compute with each other; strings and booleans
 * compare with = and <> only (other operators: unknown); comparing values of different types is
 * false; arithmetic on a non-number, or a division by zero, is unknown.
 */
import type { Expr, SelectorValue } from './parser.js';

/** Looks an identifier up in the message (header/properties by JMS name, application-properties). */
export type Resolve = (name: string) => SelectorValue;

export function evaluate(e: Expr, resolve: Resolve): SelectorValue {
  switch (e.k) {
    case 'lit':
      return e.v;
    case 'id':
      return resolve(e.name);
    case 'not': {
      const v = evaluate(e.e, resolve);
      return typeof v === 'boolean' ? !v : null;
    }
    case 'and': {
      const l = truth(evaluate(e.l, resolve));
      if (l === false) return false;
      const r = truth(evaluate(e.r, resolve));
      if (r === false) return false;
      return l === null || r === null ? null : true;
    }
    case 'or': {
      const l = truth(evaluate(e.l, resolve));
      if (l === true) return true;
      const r = truth(evaluate(e.r, resolve));
      if (r === true) return true;
      return l === null || r === null ? null : false;
    }
    case 'cmp':
      return compare(e.op, evaluate(e.l, resolve), evaluate(e.r, resolve));
    case 'arith':
      return arith(e.op, evaluate(e.l, resolve), evaluate(e.r, resolve));
    case 'neg': {
      const v = evaluate(e.e, resolve);
      return typeof v === 'number' ? -v : null;
    }
    case 'between': {
      const v = evaluate(e.e, resolve);
      const inside = andOf(
        compare('>=', v, evaluate(e.lo, resolve)),
        compare('<=', v, evaluate(e.hi, resolve)),
      );
      return e.not ? notOf(inside) : inside;
    }
    case 'like': {
      const v = evaluate(e.e, resolve);
      if (typeof v !== 'string') return null;
      const m = e.pattern.test(v);
      return e.not ? !m : m;
    }
    case 'in': {
      const v = evaluate(e.e, resolve);
      if (v === null) return null;
      const found = e.list.some((x) => compare('=', v, x) === true);
      return e.not ? !found : found;
    }
    case 'isnull': {
      const isNull = evaluate(e.e, resolve) === null;
      return e.not ? !isNull : isNull;
    }
  }
}

function truth(v: SelectorValue): boolean | null {
  return typeof v === 'boolean' ? v : null;
}

function notOf(v: SelectorValue): SelectorValue {
  return typeof v === 'boolean' ? !v : null;
}

function andOf(l: SelectorValue, r: SelectorValue): SelectorValue {
  if (l === false || r === false) return false;
  return l === true && r === true ? true : null;
}

function compare(op: string, l: SelectorValue, r: SelectorValue): SelectorValue {
  if (l === null || r === null) return null;
  if (typeof l !== typeof r) return false;
  if (typeof l === 'number') {
    const n = r as number;
    switch (op) {
      case '=':
        return l === n;
      case '<>':
        return l !== n;
      case '<':
        return l < n;
      case '<=':
        return l <= n;
      case '>':
        return l > n;
      default:
        return l >= n;
    }
  }
  if (op === '=') return l === r;
  if (op === '<>') return l !== r;
  return null;
}

function arith(op: string, l: SelectorValue, r: SelectorValue): SelectorValue {
  if (typeof l !== 'number' || typeof r !== 'number') return null;
  switch (op) {
    case '+':
      return l + r;
    case '-':
      return l - r;
    case '*':
      return l * r;
    default:
      return r === 0 ? null : l / r;
  }
}
