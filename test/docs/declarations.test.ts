/**
 * The published declarations show the public surface only (docs/architecture.md#public-surface):
 * interfaces for what the factories return, the error classes and value helpers, never an
 * implementation class, a `private` member or an `@internal` one.
 *
 * Reads dist/ as built by `npm run build` (CI builds before testing).
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

const dist = (f: string): string => fileURLToPath(new URL(`../../dist/${f}`, import.meta.url));

const ENTRY_POINTS = ['index.d.ts', 'index.d.cts', 'broker.d.ts', 'broker.d.cts'];

/** Implementation classes and types that must never be named by the published declarations. */
const INTERNAL_NAMES = [
  'Activity',
  'BrokerBackend',
  'BrokerConnection',
  'BrokerNode',
  'BrokerState',
  'ClusterBackend',
  'ClusterStateMachine',
  'DurableFs',
  'EventStore',
  'Federation',
  'LatencyHistogram',
  'LinkProxy',
  'LocalBackend',
  'MemberNode',
  'ProxyMesh',
  'Queue',
  'Replica',
  'ReplayJournal',
  'ServerPool',
  'Supervisor',
];

/** Classes a declaration file may hold besides the error classes: values users construct. */
const VALUE_CLASSES = new Set(['Typed']);

/** The declarations with their comments removed (a comment may name an internal idea). */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
}

/** What shows the insides in one declaration file: each finding as a line for the failure message. */
function internalsShown(text: string): string[] {
  const found: string[] = [];
  if (text.includes('@internal')) found.push('an @internal tag');
  const body = code(text);
  for (const m of body.matchAll(/^\s*(?:private|protected)\s+[^\n]*/gm)) found.push(`member: ${m[0].trim()}`);
  for (const m of body.matchAll(/#private/g)) found.push(`member: ${m[0]}`);
  for (const name of INTERNAL_NAMES) {
    if (new RegExp(`\\b${name}\\b`).test(body)) found.push(`internal name: ${name}`);
  }
  for (const m of body.matchAll(/\bdeclare\s+(?:abstract\s+)?class\s+(\w+)/g)) {
    const name = m[1]!;
    if (!name.endsWith('Error') && !VALUE_CLASSES.has(name)) found.push(`class: ${name}`);
  }
  return found;
}

beforeAll(() => {
  for (const f of ENTRY_POINTS) {
    if (!existsSync(dist(f))) throw new Error(`dist/${f} is missing: run \`npm run build\` first`);
  }
});

describe('published declarations', () => {
  it.each(ENTRY_POINTS)('dist/%s shows no implementation class, private or internal member', (f) => {
    expect(internalsShown(readFileSync(dist(f), 'utf8'))).toEqual([]);
  });

  it('the check finds what it looks for', () => {
    const leaky = [
      '/** @internal */',
      'declare class Supervisor {',
      '    private readonly members;',
      '}',
      'interface MemberHandle {',
      '    readonly replica: Replica;',
      '}',
    ].join('\n');
    expect(internalsShown(leaky)).toEqual([
      'an @internal tag',
      'member: private readonly members;',
      'internal name: Replica',
      'internal name: Supervisor',
      'class: Supervisor',
    ]);
    // a comment may use the words: "its private key (PEM)", "the Supervisor restarts it"
    expect(internalsShown('/** its PEM private key; the Supervisor restarts it */\ninterface A {}')).toEqual(
      [],
    );
  });
});
