/**
 * The documentation's links hold: every relative link in README.md, CONTRIBUTING.md and docs/
 * names a file that exists (and, with `#anchor`, an anchor in it), every `docs/<page>.md#anchor`
 * a code comment cites exists, and nothing points outside the repository.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** Anchors of a markdown page: explicit `<a id>` and GitHub's slugs of its headings. */
function anchorsOf(file: string): Set<string> {
  const text = readFileSync(file, 'utf8');
  const anchors = new Set<string>();
  for (const m of text.matchAll(/<a id="([^"]+)"/g)) anchors.add(m[1]);
  for (const m of text.matchAll(/^#{1,6} (.+)$/gm)) {
    const slug = m[1]
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, '')
      .replace(/ /g, '-');
    anchors.add(slug);
  }
  return anchors;
}

function filesUnder(dir: string, keep: (f: string) => boolean): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(root, dir))) {
    const rel = join(dir, entry);
    if (statSync(join(root, rel)).isDirectory()) out.push(...filesUnder(rel, keep));
    else if (keep(rel)) out.push(rel);
  }
  return out;
}

/** Problems with one link target, relative to the file that holds it ('' when it resolves). */
function checkTarget(from: string, target: string): string {
  const [path, anchor] = target.split('#') as [string, string | undefined];
  const file = path === '' ? join(root, from) : join(root, dirname(from), path);
  if (relative(root, file).startsWith('..')) return `${from}: ${target} leaves the repository`;
  try {
    statSync(file);
  } catch {
    return `${from}: ${target}: no such file`;
  }
  if (anchor !== undefined && file.endsWith('.md') && !anchorsOf(file).has(anchor)) {
    return `${from}: ${target}: no anchor #${anchor}`;
  }
  return '';
}

const pages = ['README.md', 'CONTRIBUTING.md', ...filesUnder('docs', (f) => f.endsWith('.md'))];

describe('documentation links', () => {
  it('every relative link in README, CONTRIBUTING and docs/ resolves, anchors included', () => {
    const problems: string[] = [];
    for (const page of pages) {
      const text = readFileSync(join(root, page), 'utf8');
      for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1];
        if (/^[a-z]+:/.test(target)) continue; // absolute (https:, mailto:)
        const problem = checkTarget(page, target);
        if (problem !== '') problems.push(problem);
      }
    }
    expect(problems).toEqual([]);
  });

  it('every relative link of a shipped page points into the package (package.json files)', () => {
    const shipped: string[] = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).files;
    const inPackage = (rel: string) => shipped.some((f) => rel === f || rel.startsWith(`${f}/`));
    const problems: string[] = [];
    for (const page of pages.filter(inPackage)) {
      const text = readFileSync(join(root, page), 'utf8');
      for (const m of text.matchAll(/\]\(([^)\s#]+)[^)\s]*\)/g)) {
        if (/^[a-z]+:/.test(m[1])) continue;
        const target = relative(root, join(root, dirname(page), m[1]));
        if (!inPackage(target)) problems.push(`${page}: ${m[1]} is not in the package: link it absolutely`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('every docs/<page>.md#anchor cited in the code exists', () => {
    const sources = filesUnder('src', (f) => f.endsWith('.ts') || f.endsWith('.md'))
      .concat(filesUnder('test', (f) => f.endsWith('.ts') || f.endsWith('.md')))
      .concat(filesUnder('examples', (f) => f.endsWith('.ts')));
    const problems: string[] = [];
    let cited = 0;
    for (const file of sources) {
      const text = readFileSync(join(root, file), 'utf8');
      for (const m of text.matchAll(/(?<![\w/.])(docs\/[\w-]+\.md|CONTRIBUTING\.md)#([\w-]+)/g)) {
        cited++;
        const problem = checkTarget('README.md', `${m[1]}#${m[2]}`);
        if (problem !== '') problems.push(`${file}: ${problem}`);
      }
    }
    expect(problems).toEqual([]);
    expect(cited).toBeGreaterThan(10);
  });

  it('nothing in the repository points at a design folder outside it', () => {
    const files = [
      ...pages,
      '.ci/run',
      ...['src', 'test', 'examples', 'bench'].flatMap((d) => filesUnder(d, () => true)),
    ];
    const outside = files.filter((f) => /\.\.\/shared\//.test(readFileSync(join(root, f), 'utf8')));
    expect(outside).toEqual([]);
  });
});
