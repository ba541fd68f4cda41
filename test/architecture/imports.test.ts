/**
 * The import rule of src/ (docs/architecture.md#import-rule): the folders stand in layers, and
 * each folder lists, once, the folders of lower layers it may import. The test reads every import
 * of every file and fails on an arrow the table does not list, on a listed arrow that does not
 * point down a layer, and on any cycle between folders.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { cycles, folderArrows, graphOf, unmappedFiles } from './import-graph.js';

const SRC = fileURLToPath(new URL('../../src', import.meta.url));

const CB = 'cluster-broker';
/** Folders of the broker, named relative to src/cluster-broker/ ('' is its top: api.ts). */
const cb = (...names: string[]): string[] => names.map((n) => (n === '' ? CB : `${CB}/${n}`));

// Layers, top to bottom: each folder lists, once, the folders it may import, all of lower
// layers (docs/architecture.md#layers). A file at the top of src/ is a node of its own, named
// without `.ts`.
const LAYERS: readonly Readonly<Record<string, readonly string[]>>[] = [
  // quorate/browser: the client entry point with its browser defaults (the build swaps in
  // src/browser-shims/ for the Node modules)
  { browser: ['index', 'client', 'errors', 'wire-extensions'] },
  // the package's two Node entry points
  {
    index: ['client', 'codec', 'errors'],
    broker: [
      ...cb('', 'assembly', 'supervisor', 'cluster', 'http', 'federation'),
      ...cb('server', 'store', 'replication', 'netproxy', 'core'),
      'wire-extensions',
    ],
  },
  // the broker, top to bottom (docs/architecture.md#broker-folders)
  {
    [`${CB}/cli`]: [
      ...cb('', 'assembly', 'supervisor', 'cluster', 'http'),
      ...cb('server', 'store', 'replication', 'netproxy', 'core', 'files'),
      'client',
      'wire-extensions',
      'common',
      'errors',
    ],
  },
  {
    [`${CB}/assembly`]: [
      ...cb('', 'cluster', 'http', 'federation', 'server', 'store'),
      ...cb('replication', 'replication/raft', 'core', 'files'),
      'wire-extensions',
      'common',
    ],
  },
  // cluster-broker/api.ts: the interfaces quorate/broker publishes for the handles
  { [CB]: [...cb('supervisor', 'federation', 'server', 'netproxy', 'store', 'core'), 'wire-extensions'] },
  {
    [`${CB}/supervisor`]: [
      ...cb('http', 'federation', 'server', 'replication', 'netproxy', 'files'),
      'common',
      'errors',
    ],
    [`${CB}/cluster`]: [
      ...cb('http', 'federation', 'server', 'store', 'replication', 'replication/raft', 'core', 'files'),
      'wire-extensions',
      'codec',
      'common',
      'errors',
    ],
  },
  { [`${CB}/http`]: [...cb('federation', 'server', 'files'), 'common', 'errors'] },
  // the one broker folder that uses the client (federation/upstream-client.ts)
  {
    [`${CB}/federation`]: [...cb('server', 'core'), 'client', 'wire-extensions', 'codec', 'common', 'errors'],
  },
  {
    [`${CB}/server`]: [
      ...cb('store', 'core', 'selector', 'files'),
      'protocol',
      'wire-extensions',
      'codec',
      'common',
      'errors',
    ],
  },
  {
    [`${CB}/store`]: [...cb('core', 'files'), 'common', 'errors'],
    [`${CB}/replication`]: [...cb('replication/raft', 'files'), 'codec', 'common', 'errors'],
  },
  { [`${CB}/core`]: [...cb('selector'), 'common', 'errors'] },
  {
    // the pure Raft protocol: nothing but itself
    [`${CB}/replication/raft`]: [],
    [`${CB}/selector`]: ['codec', 'errors'],
    [`${CB}/netproxy`]: ['common', 'errors'],
    [`${CB}/files`]: ['common', 'errors'],
  },
  // the client, top to bottom
  { client: ['protocol', 'failover', 'wire-extensions', 'codec', 'common', 'errors'] },
  {
    failover: ['wire-extensions', 'codec', 'common', 'errors'],
    protocol: ['codec', 'common', 'errors'],
  },
  // shared by both halves
  { 'wire-extensions': ['codec', 'errors'] },
  { codec: ['common', 'errors'] },
  // stand-ins for the Node modules in the browser build: nothing of ours
  { common: [], errors: [], 'browser-shims': [] },
];

const MAY_IMPORT: Readonly<Record<string, readonly string[]>> = Object.assign({}, ...LAYERS);
/** The layer of each folder: 0 at the top. */
const LAYER_OF = new Map(LAYERS.flatMap((layer, i) => Object.keys(layer).map((f) => [f, i] as const)));

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

  it('lists each folder once, and for each only folders of lower layers', () => {
    expect(LAYERS.flatMap((layer) => Object.keys(layer))).toHaveLength(FOLDERS.length);
    const upward = Object.entries(MAY_IMPORT).flatMap(([from, tos]) =>
      tos
        .filter((to) => !((LAYER_OF.get(to) ?? -1) > LAYER_OF.get(from)!))
        .map((to) => `${from} (layer ${LAYER_OF.get(from)}) -> ${to} (layer ${LAYER_OF.get(to)})`),
    );
    expect(upward).toEqual([]);
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
