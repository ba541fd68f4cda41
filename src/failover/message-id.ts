/**
 * The stable message-id every sent message carries (assigned on the library's own copy when the
 * application gave none), so that a re-send after failover is recognised as the same message.
 */
import { randomUUID } from 'node:crypto';
import type { MessageId } from '../codec/message-id.js';
import { copyWith } from '../common/copy-with.js';

export interface WithMessageId {
  messageId?: MessageId | null;
}

export function hasMessageId(id: unknown): id is MessageId {
  return id !== undefined && id !== null;
}

/**
 * Return a shallow copy of `message` that surely has a `messageId`, and that id. The caller's
 * object is never modified: an id the application set is kept; otherwise `generate()` (default:
 * a random UUID string) supplies one.
 */
export function ensureMessageId<M extends WithMessageId>(
  message: M,
  generate: () => MessageId = randomUUID,
): { message: M & { messageId: MessageId }; messageId: MessageId } {
  const given = message.messageId;
  const messageId = hasMessageId(given) ? given : generate();
  return { message: copyWith(message, 'messageId', messageId), messageId };
}
