/**
 * Status-page links only for http(s) member URLs (docs/security.md#http-port): a member's report
 * could carry `javascript:`; the member list passes it on as null, and the page script itself
 * (run here as it ships, with a minimal document) renders no link for one.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { webUrlOrNull } from '../../../src/cluster-broker/cluster/member-status.js';

describe('member links', () => {
  it('the member list keeps only http(s) URLs', () => {
    expect(webUrlOrNull('http://10.0.0.2:15672')).toBe('http://10.0.0.2:15672');
    expect(webUrlOrNull('https://status.example')).toBe('https://status.example');
    expect(webUrlOrNull('javascript:alert(document.cookie)')).toBeNull();
    expect(webUrlOrNull(' JavaScript:alert(1)')).toBeNull();
    expect(webUrlOrNull('data:text/html,<script>alert(1)</script>')).toBeNull();
    expect(webUrlOrNull('not a url')).toBeNull();
    expect(webUrlOrNull(undefined)).toBeNull();
  });

  it("the page script's webUrl refuses javascript: (as shipped in page/status.js)", () => {
    const src = readFileSync(
      join(import.meta.dirname, '../../../src/cluster-broker/http/page/status.js'),
      'utf8',
    );
    const fn = /function webUrl\(u\) \{[\s\S]*?\n\}/.exec(src)?.[0];
    expect(fn).toBeDefined();
    const webUrl = runInNewContext(`(${fn})`, { URL }) as (u: unknown) => string | null;
    expect(webUrl('javascript:alert(1)')).toBeNull();
    expect(webUrl('http://127.0.0.1:1')).toBe('http://127.0.0.1:1');
    // every link the page builds from a member URL goes through it
    expect(src).not.toMatch(/href: m\.httpUrl/);
  });
});
