/**
 * queueOfAddress (attach-support.ts): what a link's address or a relayed message's `to` names,
 * answered as the name itself (the relay's per-message path allocates nothing) or why it is none.
 */
import { describe, expect, it } from 'vitest';
import { MAX_ADDRESS_LENGTH, queueOfAddress } from '../../../src/cluster-broker/server/attach-support.js';

describe('queueOfAddress', () => {
  it('answers a plain name with the name itself', () => {
    const address = 'orders';
    expect(queueOfAddress(address)).toBe(address);
  });

  it('answers a v2 /queues/NAME address with NAME, percent-decoded', () => {
    expect(queueOfAddress('/queues/a%2Fb')).toBe('a/b');
  });

  it('answers why for a missing, non-string, too long or malformed address', () => {
    expect(queueOfAddress(undefined)).toEqual({ why: 'an address is required' });
    expect(queueOfAddress(42)).toEqual({ why: 'the address must be a string' });
    expect(queueOfAddress('x'.repeat(MAX_ADDRESS_LENGTH + 1))).toEqual({
      why: `address longer than ${MAX_ADDRESS_LENGTH} characters`,
    });
    expect(queueOfAddress('/queues/')).toEqual({ why: "'/queues/' is not a valid /queues/NAME address" });
    expect(queueOfAddress('/queues/%E0%A4%A')).toHaveProperty('why');
  });
});
