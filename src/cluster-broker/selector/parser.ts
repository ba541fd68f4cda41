/**
 * JMS selector parser: recursive descent over the tokens, precedence (loosest first) OR, AND,
 * NOT, then comparison / [NOT] BETWEEN / [NOT] LIKE ... [ESCAPE] / [NOT] IN (...) / IS [NOT] NULL,
 * then + -, then * /, then unary + -.
 */
import { SelectorError } from './errors.js';
import { type Token, tokenize } from './lexer.js';
import { LikePattern } from './like.js';

/**
 * The most characters a selector may have (docs/broker-features.md#selector-limits): with the
 * depth limit it bounds what one message costs to evaluate, which runs in the replicated apply.
 */
export const MAX_SELECTOR_LENGTH = 4096;
/** The deepest a selector may nest: parentheses, NOT, signs, and operators within operators. */
export const MAX_SELECTOR_DEPTH = 100;

/** A selector value: JMS's types as JavaScript sees them; null = unknown/absent. */
export type SelectorValue = string | number | boolean | null;

export type CompareOp = '=' | '<>' | '<' | '<=' | '>' | '>=';
export type ArithOp = '+' | '-' | '*' | '/';

export type Expr =
  | { k: 'lit'; v: SelectorValue }
  | { k: 'id'; name: string }
  | { k: 'not'; e: Expr }
  | { k: 'and' | 'or'; l: Expr; r: Expr }
  | { k: 'cmp'; op: CompareOp; l: Expr; r: Expr }
  | { k: 'arith'; op: ArithOp; l: Expr; r: Expr }
  | { k: 'neg'; e: Expr }
  | { k: 'between'; e: Expr; lo: Expr; hi: Expr; not: boolean }
  | { k: 'like'; e: Expr; pattern: LikePattern; not: boolean }
  | { k: 'in'; e: Expr; list: SelectorValue[]; not: boolean }
  | { k: 'isnull'; e: Expr; not: boolean };

const COMPARE = new Set(['=', '<>', '<', '<=', '>', '>=']);

export function parseSelector(text: string): Expr {
  if (text.length > MAX_SELECTOR_LENGTH) {
    throw new SelectorError(`longer than ${MAX_SELECTOR_LENGTH} characters (${text.length})`);
  }
  const p = new Parser(tokenize(text));
  const e = p.orExpr();
  p.expectEnd();
  // the parser's own nesting is checked as it descends; chains of AND, OR and arithmetic grow
  // the tree without recursion, so its depth is checked here, before evaluate recurses into it
  if (treeDepth(e) > MAX_SELECTOR_DEPTH) throw tooDeep();
  if (e.k === 'arith' || e.k === 'neg' || (e.k === 'lit' && typeof e.v !== 'boolean')) {
    throw new SelectorError('a selector must be a conditional expression');
  }
  return e;
}

/** A LIKE pattern compiled for linear-time matching: % any run, _ one character, `escapeChar` quoting the next one. */
export function likePattern(pattern: string, escapeChar: string | undefined): LikePattern {
  return new LikePattern(pattern, escapeChar);
}

/** The depth of an expression tree (a leaf is 1). */
function treeDepth(e: Expr): number {
  switch (e.k) {
    case 'lit':
    case 'id':
      return 1;
    case 'not':
    case 'neg':
    case 'like':
    case 'in':
    case 'isnull':
      return 1 + treeDepth(e.e);
    case 'between':
      return 1 + Math.max(treeDepth(e.e), treeDepth(e.lo), treeDepth(e.hi));
    default:
      return 1 + Math.max(treeDepth(e.l), treeDepth(e.r));
  }
}

function tooDeep(): SelectorError {
  return new SelectorError(`nested deeper than ${MAX_SELECTOR_DEPTH} levels`);
}

class Parser {
  private i = 0;
  /** Parentheses, NOT and signs open around the current position. */
  private nesting = 0;

  constructor(private readonly tokens: Token[]) {}

  private peek(): Token {
    return this.tokens[this.i]!;
  }

  private next(): Token {
    return this.tokens[this.i++]!;
  }

  private isKw(v: string, offset = 0): boolean {
    const t = this.tokens[this.i + offset];
    return t?.t === 'kw' && t.v === v;
  }

  private isOp(v: string): boolean {
    const t = this.peek();
    return t.t === 'op' && t.v === v;
  }

  private fail(what: string): never {
    const t = this.peek();
    const found = t.t === 'end' ? 'the end' : `'${String(t.v)}'`;
    throw new SelectorError(`expected ${what} at ${t.at}, found ${found}`);
  }

  private expectOp(v: string): void {
    if (!this.isOp(v)) this.fail(`'${v}'`);
    this.i++;
  }

  /** Parses one level deeper, refusing a selector nested past the limit before recursing further. */
  private nested(parse: () => Expr): Expr {
    if (++this.nesting > MAX_SELECTOR_DEPTH) throw tooDeep();
    try {
      return parse();
    } finally {
      this.nesting--;
    }
  }

  expectEnd(): void {
    if (this.peek().t !== 'end') this.fail('the end of the selector');
  }

  orExpr(): Expr {
    let l = this.andExpr();
    while (this.isKw('OR')) {
      this.i++;
      l = { k: 'or', l, r: this.andExpr() };
    }
    return l;
  }

  private andExpr(): Expr {
    let l = this.notExpr();
    while (this.isKw('AND')) {
      this.i++;
      l = { k: 'and', l, r: this.notExpr() };
    }
    return l;
  }

  private notExpr(): Expr {
    if (this.isKw('NOT')) {
      this.i++;
      return { k: 'not', e: this.nested(() => this.notExpr()) };
    }
    return this.predicate();
  }

  private predicate(): Expr {
    const e = this.additive();
    const t = this.peek();
    if (t.t === 'op' && COMPARE.has(t.v)) {
      this.i++;
      return { k: 'cmp', op: t.v as CompareOp, l: e, r: this.additive() };
    }
    const not = this.isKw('NOT') && (this.isKw('BETWEEN', 1) || this.isKw('LIKE', 1) || this.isKw('IN', 1));
    if (not) this.i++;
    if (this.isKw('BETWEEN')) {
      this.i++;
      const lo = this.additive();
      if (!this.isKw('AND')) this.fail('AND of BETWEEN');
      this.i++;
      return { k: 'between', e, lo, hi: this.additive(), not };
    }
    if (this.isKw('LIKE')) {
      this.i++;
      const pattern = this.next();
      if (pattern.t !== 'str') {
        this.i--;
        this.fail('a string pattern after LIKE');
      }
      let escapeChar: string | undefined;
      if (this.isKw('ESCAPE')) {
        this.i++;
        const esc = this.next();
        if (esc.t !== 'str' || [...esc.v].length !== 1) {
          this.i--;
          this.fail('a one-character string after ESCAPE');
        }
        escapeChar = esc.v;
      }
      return { k: 'like', e, pattern: likePattern(pattern.v, escapeChar), not };
    }
    if (this.isKw('IN')) {
      this.i++;
      this.expectOp('(');
      const list: SelectorValue[] = [this.literal()];
      while (this.isOp(',')) {
        this.i++;
        list.push(this.literal());
      }
      this.expectOp(')');
      return { k: 'in', e, list, not };
    }
    if (not) this.fail('BETWEEN, LIKE or IN after NOT');
    if (this.isKw('IS')) {
      this.i++;
      const isNot = this.isKw('NOT');
      if (isNot) this.i++;
      if (!this.isKw('NULL')) this.fail('NULL after IS');
      this.i++;
      return { k: 'isnull', e, not: isNot };
    }
    return e;
  }

  private literal(): SelectorValue {
    const t = this.next();
    if (t.t === 'str' || t.t === 'num') return t.v;
    if (t.t === 'op' && (t.v === '-' || t.v === '+') && this.peek().t === 'num') {
      const n = this.next() as { v: number };
      return t.v === '-' ? -n.v : n.v;
    }
    if (t.t === 'kw' && (t.v === 'TRUE' || t.v === 'FALSE')) return t.v === 'TRUE';
    this.i--;
    return this.fail('a literal');
  }

  private additive(): Expr {
    let l = this.multiplicative();
    for (;;) {
      const t = this.peek();
      if (t.t !== 'op' || (t.v !== '+' && t.v !== '-')) return l;
      this.i++;
      l = { k: 'arith', op: t.v, l, r: this.multiplicative() };
    }
  }

  private multiplicative(): Expr {
    let l = this.unary();
    for (;;) {
      const t = this.peek();
      if (t.t !== 'op' || (t.v !== '*' && t.v !== '/')) return l;
      this.i++;
      l = { k: 'arith', op: t.v, l, r: this.unary() };
    }
  }

  private unary(): Expr {
    if (this.isOp('-')) {
      this.i++;
      return { k: 'neg', e: this.nested(() => this.unary()) };
    }
    if (this.isOp('+')) {
      this.i++;
      return this.nested(() => this.unary());
    }
    return this.primary();
  }

  private primary(): Expr {
    const t = this.next();
    switch (t.t) {
      case 'str':
      case 'num':
        return { k: 'lit', v: t.v };
      case 'id':
        return { k: 'id', name: t.v };
      case 'kw':
        if (t.v === 'TRUE' || t.v === 'FALSE') return { k: 'lit', v: t.v === 'TRUE' };
        break;
      case 'op':
        if (t.v === '(') {
          const e = this.nested(() => this.orExpr());
          this.expectOp(')');
          return e;
        }
        break;
      default:
        break;
    }
    this.i--;
    return this.fail('a value, an identifier or (');
  }
}
