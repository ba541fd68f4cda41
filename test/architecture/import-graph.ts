/**
 * The folder-level import graph of src/: every relative import of every .ts file (static
 * `import`/`export ... from`, `import type`, dynamic `import()`), resolved to the folder it lands
 * in. Type-only imports count: an arrow in the declarations is an arrow all the same.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

/** One import of one file that crosses from one folder into another. */
export interface FolderArrow {
  from: string;
  to: string;
  /** The importing file, relative to src/. */
  file: string;
  specifier: string;
}

const IMPORT_SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])(\.{1,2}\/[^'"]+)\1/g;

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tsFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/**
 * The folder a file of src/ belongs to: the longest of `folders` that contains it; a file at the
 * top of src/ is its own node, named without `.ts` (`errors`, `index`, `broker`, ...). Undefined
 * for a file in no listed folder.
 */
export function folderOf(srcDir: string, file: string, folders: readonly string[]): string | undefined {
  const rel = relative(srcDir, file).split(sep).join('/');
  if (!rel.includes('/')) return rel.replace(/\.ts$/, '');
  const dir = rel.slice(0, rel.lastIndexOf('/'));
  let best: string | undefined;
  for (const f of folders) {
    if ((dir === f || dir.startsWith(`${f}/`)) && (best === undefined || f.length > best.length)) best = f;
  }
  return best;
}

/** Every file of src/ that no listed folder holds (each must be given a place in the map). */
export function unmappedFiles(srcDir: string, folders: readonly string[]): string[] {
  return tsFiles(srcDir)
    .filter((f) => folderOf(srcDir, f, folders) === undefined)
    .map((f) => relative(srcDir, f));
}

/** Every import in src/ that crosses a folder boundary. */
export function folderArrows(srcDir: string, folders: readonly string[]): FolderArrow[] {
  const arrows: FolderArrow[] = [];
  for (const file of tsFiles(srcDir)) {
    const from = folderOf(srcDir, file, folders);
    for (const m of readFileSync(file, 'utf8').matchAll(IMPORT_SPECIFIER)) {
      const specifier = m[2] as string;
      const target = resolve(dirname(file), specifier.replace(/\.js$/, '.ts'));
      const to = folderOf(srcDir, target, folders);
      if (from === undefined || to === undefined || from === to) continue;
      arrows.push({ from, to, file: relative(srcDir, file), specifier });
    }
  }
  return arrows;
}

/** The cycles of a directed graph: each strongly connected component of more than one node (Tarjan). */
export function cycles(edges: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
      }
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop() as string;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  return found;
}

/** Arrows grouped as a graph: folder -> the folders it imports. */
export function graphOf(arrows: readonly Pick<FolderArrow, 'from' | 'to'>[]): Map<string, Set<string>> {
  const g = new Map<string, Set<string>>();
  for (const { from, to } of arrows) {
    if (!g.has(from)) g.set(from, new Set());
    g.get(from)?.add(to);
  }
  return g;
}
