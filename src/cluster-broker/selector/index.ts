/**
 * JMS message selectors (the `apache.org:selector-filter:string` source filter): compile once at
 * attach (a malformed selector throws SelectorError), then `matches(bytes)` per message.
 */
import { decodeMessage } from '../../codec/message.js';
import { evaluate } from './evaluate.js';
import { fieldOf } from './message-fields.js';
import { type Expr, parseSelector } from './parser.js';

export { SelectorError } from './errors.js';
export { evaluate, type Resolve } from './evaluate.js';
export { LikePattern } from './like.js';
export { fieldOf } from './message-fields.js';
export {
  type Expr,
  likePattern,
  MAX_SELECTOR_DEPTH,
  MAX_SELECTOR_LENGTH,
  parseSelector,
  type SelectorValue,
} from './parser.js';

export class Selector {
  private readonly expr: Expr;
  /** Messages evaluated so far (for tests and diagnostics: at most one per message per subscription). */
  evaluations = 0;

  /** Throws SelectorError when `text` is not a valid selector. */
  constructor(readonly text: string) {
    this.expr = parseSelector(text);
  }

  /** True when the encoded message satisfies the selector (an undecodable message never does). */
  matches(bytes: Uint8Array): boolean {
    this.evaluations++;
    let message: ReturnType<typeof decodeMessage>;
    try {
      message = decodeMessage(bytes);
    } catch {
      return false;
    }
    return evaluate(this.expr, (name) => fieldOf(message, name)) === true;
  }
}
