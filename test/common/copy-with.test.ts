/**
 * copyWith: a copy with one property set, and (the reason it exists) copies that keep one hidden
 * class per source shape once V8 has optimized the call site. The second is checked in a child
 * Node with --allow-natives-syntax, next to the spread it replaces, which must show the problem
 * (else the probe proves nothing).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { expect, it } from 'vitest';
import { copyWith } from '../../src/common/copy-with.js';

it('copies, sets the property, leaves the source alone, takes an undefined source', () => {
  const source = { body: 1, messageId: undefined as string | undefined };
  const copy = copyWith(source, 'messageId', 'm-1');
  expect(copy).toEqual({ body: 1, messageId: 'm-1' });
  expect(source.messageId).toBeUndefined();
  expect(copy).not.toBe(source);
  expect(copyWith(undefined, 'firstAcquirer', true)).toEqual({ firstAcquirer: true });
});

it('gives copies of one source shape one hidden class after optimization (a spread does not)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'quorate-copy-with-'));
  try {
    const module = pathToFileURL(
      fileURLToPath(new URL('../../src/common/copy-with.ts', import.meta.url)),
    ).href;
    const probe = join(dir, 'probe.mts');
    writeFileSync(
      probe,
      `import { copyWith } from ${JSON.stringify(module)};
const stable = (make: (i: number) => object) => {
  for (let i = 0; i < 50000; i++) make(i);
  const a = make(1), b = make(2), c = make(3);
  // @ts-ignore natives syntax
  return eval('%HaveSameMap(a, b) && %HaveSameMap(b, c)');
};
const header = { durable: true };
console.log(JSON.stringify({
  copyWith: stable((i) => copyWith({ body: i }, 'messageId', 'm' + i)),
  copyWithHeader: stable(() => copyWith(header, 'firstAcquirer', true)),
  spread: stable((i) => ({ ...{ body: i }, messageId: 'm' + i })),
}));
`,
    );
    const tsx = createRequire(import.meta.url).resolve('tsx');
    const out = execFileSync(
      process.execPath,
      ['--allow-natives-syntax', '--import', pathToFileURL(tsx).href, probe],
      {
        encoding: 'utf8',
        timeout: 60_000,
      },
    );
    expect(JSON.parse(out)).toEqual({ copyWith: true, copyWithHeader: true, spread: false });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
