import { describe, expect, it } from 'vitest';
import { MESSAGE_ID_KEY_MAX, messageIdKey } from '../../src/codec/message-id.js';
import { Typed } from '../../src/codec/typed.js';

describe('messageIdKey (the dedup key of client receivers and broker queues)', () => {
  it('keys by type and value, so equal values of different types differ', () => {
    expect(messageIdKey('1')).toBe('string:1');
    expect(messageIdKey(new Typed('ulong', 1))).toBe('ulong:1');
    expect(messageIdKey(new Typed('ulong', 2n ** 64n - 1n))).toBe('ulong:18446744073709551615');
    expect(messageIdKey(new Uint8Array([0, 0x1f, 0xff]))).toBe('binary:001fff');
    expect(new Set([messageIdKey('1'), messageIdKey(new Typed('ulong', 1)), messageIdKey(1)]).size).toBe(3);
  });

  it('gives one key for a uuid as text (any case) or as 16 bytes', () => {
    const text = '0123ABCD-0000-4000-8000-00000000FFFF';
    const bytes = Uint8Array.from([1, 0x23, 0xab, 0xcd, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0xff, 0xff]);
    expect(messageIdKey(new Typed('uuid', text))).toBe('uuid:0123abcd00004000800000000000ffff');
    expect(messageIdKey(new Typed('uuid', bytes))).toBe('uuid:0123abcd00004000800000000000ffff');
  });

  it('distinguishes type and value, normalizes representations', () => {
    const t = (type: string, value: unknown) => ({ type, value }) as never;
    expect(messageIdKey('a')).not.toBe(messageIdKey(t('symbol', 'a')));
    expect(messageIdKey('a')).not.toBe(messageIdKey(new Uint8Array([0x61])));
    expect(messageIdKey(t('ulong', 5))).toBe(messageIdKey(t('ulong', 5n)));
    expect(messageIdKey(t('ulong', 5))).not.toBe(messageIdKey(5));
    expect(messageIdKey(5)).toBe(messageIdKey(t('int', 5)));
    expect(messageIdKey(2 ** 40)).toBe(messageIdKey(t('long', 2n ** 40n)));
    expect(messageIdKey(5n)).toBe(messageIdKey(t('long', 5)));
    expect(messageIdKey(t('uuid', 'AB-cd'))).toBe(messageIdKey(t('uuid', new Uint8Array([0xab, 0xcd]))));
    expect(messageIdKey(t('binary', new Uint8Array([1])))).toBe(messageIdKey(new Uint8Array([1])));
    expect(messageIdKey(undefined)).toBeUndefined();
    expect(messageIdKey(null)).toBeUndefined();
  });

  it(`keys ids longer than ${MESSAGE_ID_KEY_MAX} by their SHA-256: short keys, same id same key`, () => {
    const atLimit = 'x'.repeat(MESSAGE_ID_KEY_MAX);
    expect(messageIdKey(atLimit)).toBe(`string:${atLimit}`);
    const huge = new Uint8Array(8 * 1024 * 1024).fill(7);
    const key = messageIdKey(huge)!;
    expect(key).toMatch(/^binary#sha256:[0-9a-f]{64}$/);
    expect(messageIdKey(Uint8Array.from(huge))).toBe(key);
    const other = Uint8Array.from(huge);
    other[other.length - 1] = 8;
    expect(messageIdKey(other)).not.toBe(key);
    const longText = 'y'.repeat(1024 * 1024);
    expect(messageIdKey(longText)).toMatch(/^string#sha256:[0-9a-f]{64}$/);
    expect(messageIdKey(longText)).not.toBe(messageIdKey(new TextEncoder().encode(longText)));
    expect(messageIdKey({ type: 'symbol', value: longText } as never)).toMatch(/^symbol#sha256:/);
    // a short id that spells a digest key cannot collide with one: verbatim keys use ':' after the type
    const spelled = key.slice('binary#'.length);
    expect(messageIdKey(spelled)).toBe(`string:${spelled}`);
  });
});
