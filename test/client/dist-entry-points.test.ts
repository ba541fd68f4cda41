/**
 * The built package (`npm run build` first; CI builds before testing): `quorate` and
 * `quorate/broker` share one copy of every class, so `instanceof` holds across the entry points
 * in ESM and in CJS, and the published declarations hold no client internals.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const dist = (f: string) => fileURLToPath(new URL(`../../dist/${f}`, import.meta.url));

function built(): void {
  if (!existsSync(dist('index.js')) || !existsSync(dist('broker.cjs')))
    throw new Error('dist/ is missing: run `npm run build` before this test');
}

/**
 * A declaration file with the shared declaration chunks it re-exports from (`from './x.js'`):
 * with quorate/browser built too, what index.d.ts publishes lives in a chunk both entry points share.
 */
function declarations(file: string, seen = new Set<string>()): string {
  if (seen.has(file)) return '';
  seen.add(file);
  const text = readFileSync(dist(file), 'utf8');
  const chunks = [...text.matchAll(/from '\.\/([^']+)\.js'/g)].map((m) => `${m[1]}.d.ts`);
  return [text, ...chunks.map((c) => declarations(c, seen))].join('\n');
}

/** Runs `code` in a fresh node (ESM or CJS) from the package root; returns its stdout. */
function run(code: string, type: 'module' | 'commonjs'): string {
  return execFileSync(process.execPath, ['--input-type', type, '-e', code], { cwd: root, encoding: 'utf8' });
}

const CHECK = `
const err = new broker.BackendClosedError('closed');
const client = new index.ClientError('quorate:closed', 'x');
process.stdout.write(JSON.stringify({
  brokerErrorIsClientAmqpError: err instanceof index.AmqpError,
  clientErrorIsAmqpError: client instanceof index.AmqpError,
}));`;

describe('dist entry points', () => {
  it('ESM: an error from quorate/broker is instanceof AmqpError from quorate', () => {
    built();
    const out = run(
      `import * as index from 'quorate'; import * as broker from 'quorate/broker';${CHECK}`,
      'module',
    );
    expect(JSON.parse(out)).toEqual({
      brokerErrorIsClientAmqpError: true,
      clientErrorIsAmqpError: true,
    });
  });

  it('CJS: the same across require(quorate) and require(quorate/broker)', () => {
    built();
    const out = run(
      `const index = require('quorate'); const broker = require('quorate/broker');${CHECK}`,
      'commonjs',
    );
    expect(JSON.parse(out)).toEqual({
      brokerErrorIsClientAmqpError: true,
      clientErrorIsAmqpError: true,
    });
  });

  it('index.d.ts exports interfaces, not the implementation classes or their internals', () => {
    built();
    const dts = declarations('index.d.ts');
    for (const internal of [
      'ProtocolConnection',
      'ReplayJournal',
      'PhysicalConnection',
      'kick(',
      'syncWritten',
    ])
      expect(dts).not.toContain(internal);
    expect(dts).toMatch(/interface Connection extends/);
    expect(dts).not.toMatch(/declare class (Connection|Sender|Receiver|Delivery)\b/);
    expect(dts).toMatch(/readonly state: ConnectionState/);
  });
});
