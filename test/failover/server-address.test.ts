import { describe, expect, it } from 'vitest';
import { describeServer, parseServerUrl, serverKey } from '../../src/failover/server-address.js';

describe('parseServerUrl', () => {
  it('parses credentials, host and port', () => {
    const s = parseServerUrl('amqp://guest:s%40cret@Broker-1.example:5700');
    expect(s).toMatchObject({
      key: 'broker-1.example:5700',
      scheme: 'amqp',
      host: 'Broker-1.example',
      port: 5700,
      username: 'guest',
      password: 's@cret',
      source: 'configured',
    });
  });

  it('defaults ports by scheme', () => {
    expect(parseServerUrl('amqp://h').port).toBe(5672);
    expect(parseServerUrl('amqps://h').port).toBe(5671);
    expect(parseServerUrl('AMQPS://h').scheme).toBe('amqps');
  });

  it('handles IPv6 hosts', () => {
    const s = parseServerUrl('amqp://[::1]:6000');
    expect(s.host).toBe('::1');
    expect(s.key).toBe('[::1]:6000');
    expect(describeServer(s)).toBe('amqp://[::1]:6000');
  });

  it('keeps per-endpoint options and never shows the password', () => {
    const s = parseServerUrl({ url: 'amqps://u:p@h:1', options: { ca: 'x' } });
    expect(s.options).toEqual({ ca: 'x' });
    expect(describeServer(s)).toBe('amqps://u@h:1');
  });

  it('rejects other schemes and garbage with a TypeError coded ERR_INVALID_URL', () => {
    for (const bad of ['http://h', 'not a url']) {
      expect(() => parseServerUrl(bad)).toThrow(TypeError);
      expect(() => parseServerUrl(bad)).toThrow(expect.objectContaining({ code: 'ERR_INVALID_URL' }));
    }
  });

  it('serverKey lowercases and brackets IPv6', () => {
    expect(serverKey('HOST', 1)).toBe('host:1');
    expect(serverKey('fe80::1', 2)).toBe('[fe80::1]:2');
  });
});
