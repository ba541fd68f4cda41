/**
 * Every mutant still applies: its text occurs exactly once in its file, and each test file it
 * names exists. Without this, moving code (a split, a rename) leaves `npm run mutants` stopping
 * at "text to find occurs 0 times", which nothing in CI would notice.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { MUTANTS } from './mutants.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

function occurrences(text: string, find: string): number {
  return text.split(find).length - 1;
}

describe('mutants', () => {
  it.each(MUTANTS.map((m) => [m.name, m] as const))(
    '%s: its text occurs once and its tests exist',
    (_, m) => {
      const source = readFileSync(join(ROOT, m.file), 'utf8');
      expect(occurrences(source, m.find)).toBe(1);
      expect(m.replace).not.toBe(m.find);
      for (const t of m.tests) expect(existsSync(join(ROOT, t)), t).toBe(true);
    },
  );

  it('names each mutant once', () => {
    const names = MUTANTS.map((m) => m.name);
    expect(new Set(names).size).toBe(names.length);
  });
});
