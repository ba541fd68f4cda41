/**
 * The import rule of src/ (docs/architecture.md#import-rule): each folder lists, once, the folders
 * it may import. The test reads every import of every file and fails on an arrow the table does
 * not list and on any cycle between folders (in the code, and in the table itself).
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { cycles, folderArrows, graphOf, unmappedFiles } from './import-graph.js';

const SRC = fileURLToPath(new URL('../../src', import.meta.url));

// Top to bottom. A file at the top of src/ is a node of its own, named without `.ts`.
const CB = 'cluster-broker';
const MAY_IMPORT: Readonly<Record<string, readonly string[]>> = {
  // the package's two entry points
  index: ['client', 'codec', 'errors'],
  // quorate/browser: the client with its browser defaults (the build swaps in src/browser-shims/)
  browser: ['index', 'client', 'errors', 'wire-extensions'],
  'browser-shims': [],
  broker: [
    CB,
    `${CB}/assembly`,
    `${CB}/supervisor`,
    `${CB}/cluster`,
    `${CB}/http`,
    `${CB}/federation`,
    `${CB}/server`,
    `${CB}/store`,
    `${CB}/replication`,
    `${CB}/netproxy`,
    `${CB}/core`,
    'wire-extensions',
  ],
  // the broker, top to bottom
  [`${CB}/cli`]: [
    CB,
    `${CB}/assembly`,
    `${CB}/supervisor`,
    `${CB}/cluster`,
    `${CB}/http`,
    `${CB}/server`,
    `${CB}/store`,
    `${CB}/replication`,
    `${CB}/netproxy`,
    `${CB}/core`,
    `${CB}/files`,
    'common',
    'errors',
  ],
  [`${CB}/assembly`]: [
    CB,
    `${CB}/cluster`,
    `${CB}/http`,
    `${CB}/federation`,
    `${CB}/server`,
    `${CB}/store`,
    `${CB}/replication`,
    `${CB}/replication/raft`,
    `${CB}/core`,
    `${CB}/files`,
    'wire-extensions',
  ],
  // cluster-broker/api.ts: the interfaces quorate/broker publishes for the handles
  [CB]: [
    `${CB}/supervisor`,
    `${CB}/federation`,
    `${CB}/server`,
    `${CB}/netproxy`,
    `${CB}/store`,
    `${CB}/core`,
    'wire-extensions',
  ],
  [`${CB}/supervisor`]: [
    `${CB}/http`,
    `${CB}/federation`,
    `${CB}/server`,
    `${CB}/replication`,
    `${CB}/netproxy`,
    `${CB}/files`,
    'common',
    'errors',
  ],
  [`${CB}/cluster`]: [
    `${CB}/http`,
    `${CB}/federation`,
    `${CB}/server`,
    `${CB}/store`,
    `${CB}/replication`,
    `${CB}/replication/raft`,
    `${CB}/core`,
    `${CB}/files`,
    'wire-extensions',
    'codec',
    'common',
    'errors',
  ],
  [`${CB}/http`]: [`${CB}/federation`, `${CB}/server`, `${CB}/files`, 'errors'],
  // the one broker folder that uses the client (federation/upstream-client.ts)
  [`${CB}/federation`]: [
    `${CB}/server`,
    `${CB}/core`,
    'client',
    'wire-extensions',
    'codec',
    'common',
    'errors',
  ],
  [`${CB}/server`]: [
    `${CB}/store`,
    `${CB}/core`,
    `${CB}/selector`,
    `${CB}/files`,
    'protocol',
    'wire-extensions',
    'codec',
    'common',
    'errors',
  ],
  [`${CB}/store`]: [`${CB}/core`, `${CB}/files`, 'common', 'errors'],
  [`${CB}/replication`]: [`${CB}/replication/raft`, `${CB}/files`, 'codec', 'common', 'errors'],
  // the pure Raft protocol: nothing but itself and the error base (which imports nothing)
  [`${CB}/replication/raft`]: ['errors'],
  [`${CB}/netproxy`]: ['common', 'errors'],
  [`${CB}/core`]: [`${CB}/selector`, 'common', 'errors'],
  [`${CB}/selector`]: ['codec', 'errors'],
  [`${CB}/files`]: ['common', 'errors'],
  // the client, top to bottom
  client: ['protocol', 'failover', 'wire-extensions', 'codec', 'common', 'errors'],
  failover: ['wire-extensions', 'codec', 'common', 'errors'],
  protocol: ['codec', 'common', 'errors'],
  // shared by both halves
  'wire-extensions': ['codec', 'errors'],
  codec: ['common', 'errors'],
  common: [],
  errors: [],
};

const FOLDERS = Object.keys(MAY_IMPORT);

describe('the import rule of src/', () => {
  const arrows = folderArrows(SRC, FOLDERS);

  it('gives every file of src/ a folder in the table', () => {
    expect(unmappedFiles(SRC, FOLDERS)).toEqual([]);
  });

  it('finds the arrows it checks (the reader is not blind)', () => {
    expect(arrows.some((a) => a.from === 'client' && a.to === 'codec')).toBe(true);
    expect(arrows.some((a) => a.from === `${CB}/server` && a.to === `${CB}/core`)).toBe(true);
  });

  it('lists only folders that the table defines, in a table without a cycle', () => {
    for (const [folder, allowed] of Object.entries(MAY_IMPORT)) {
      for (const to of allowed) expect(FOLDERS, `${folder} may import ${to}`).toContain(to);
    }
    const table = graphOf(
      Object.entries(MAY_IMPORT).flatMap(([from, tos]) => tos.map((to) => ({ from, to }))),
    );
    expect(cycles(table)).toEqual([]);
  });

  it('has no import the table does not allow', () => {
    const forbidden = arrows
      .filter((a) => !(MAY_IMPORT[a.from] ?? []).includes(a.to))
      .map((a) => `${a.file} imports ${a.specifier} (${a.from} -> ${a.to})`);
    expect(forbidden).toEqual([]);
  });

  it('has no cycle between folders', () => {
    expect(cycles(graphOf(arrows))).toEqual([]);
  });
});
