/** Tokens of the JMS message selector language (JMS 2.0, 3.8.1.1): SQL-92 conditional subset. */
import { SelectorError } from './errors.js';

export type Token =
  | { t: 'str'; v: string; at: number }
  | { t: 'num'; v: number; at: number }
  | { t: 'id'; v: string; at: number }
  /** keywords, upper-cased: NOT AND OR BETWEEN LIKE IN IS NULL TRUE FALSE ESCAPE */
  | { t: 'kw'; v: string; at: number }
  /** = <> < <= > >= + - * / ( ) , */
  | { t: 'op'; v: string; at: number }
  | { t: 'end'; at: number };

const KEYWORDS = new Set([
  'NOT',
  'AND',
  'OR',
  'BETWEEN',
  'LIKE',
  'IN',
  'IS',
  'NULL',
  'TRUE',
  'FALSE',
  'ESCAPE',
]);
const ID_START = /[A-Za-z_$\p{L}]/u;
const ID_PART = /[A-Za-z0-9_$\p{L}\p{N}]/u;
const DECIMAL = /^(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)[lLfFdD]?/;
const HEX = /^0[xX][0-9a-fA-F]+[lL]?/;

export function tokenize(text: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === "'") {
      let v = '';
      let j = i + 1;
      for (;;) {
        if (j >= text.length) throw new SelectorError(`unterminated string starting at ${i}`);
        if (text[j] === "'") {
          if (text[j + 1] === "'") {
            v += "'";
            j += 2;
            continue;
          }
          break;
        }
        v += text[j++];
      }
      out.push({ t: 'str', v, at: i });
      i = j + 1;
      continue;
    }
    const rest = text.slice(i);
    const hex = HEX.exec(rest);
    if (hex) {
      out.push({ t: 'num', v: Number.parseInt(hex[0].replace(/[lL]$/, ''), 16), at: i });
      i += hex[0].length;
      continue;
    }
    if (/[0-9.]/.test(c)) {
      const m = DECIMAL.exec(rest);
      if (!m) throw new SelectorError(`unexpected '${c}' at ${i}`);
      out.push({ t: 'num', v: Number(m[0].replace(/[lLfFdD]$/, '')), at: i });
      i += m[0].length;
      continue;
    }
    if (ID_START.test(c)) {
      let j = i + 1;
      while (j < text.length && ID_PART.test(text[j]!)) j++;
      const word = text.slice(i, j);
      const upper = word.toUpperCase();
      out.push(KEYWORDS.has(upper) ? { t: 'kw', v: upper, at: i } : { t: 'id', v: word, at: i });
      i = j;
      continue;
    }
    const two = text.slice(i, i + 2);
    if (two === '<>' || two === '<=' || two === '>=') {
      out.push({ t: 'op', v: two, at: i });
      i += 2;
      continue;
    }
    if ('=<>+-*/(),'.includes(c)) {
      out.push({ t: 'op', v: c, at: i });
      i++;
      continue;
    }
    throw new SelectorError(`unexpected '${c}' at ${i}`);
  }
  out.push({ t: 'end', at: text.length });
  return out;
}
