/**
 * Every TypeScript block in README.md, docs/client.md and docs/broker.md type-checks as a user's file would: placed beside the
 * examples, importing `quorate` / `quorate/broker` (mapped to the source by tsconfig paths).
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { expect, it } from 'vitest';
import { PAGES_WITH_CODE, typeScriptBlocks } from './markdown-code.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** Type errors of `files` (virtual path -> text), compiled with the repository's tsconfig. */
function typeErrors(files: Map<string, string>): string[] {
  const configPath = join(root, 'tsconfig.json');
  const config = ts.readConfigFile(configPath, ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, root);
  const host = ts.createCompilerHost(parsed.options);
  const { fileExists, readFile, getSourceFile } = host;
  host.fileExists = (f) => files.has(f) || fileExists.call(host, f);
  host.readFile = (f) => files.get(f) ?? readFile.call(host, f);
  host.getSourceFile = (f, lang, onError, create) => {
    const text = files.get(f);
    return text === undefined
      ? getSourceFile.call(host, f, lang, onError, create)
      : ts.createSourceFile(f, text, lang, true);
  };
  const program = ts.createProgram([...files.keys()], parsed.options, host);
  return ts
    .getPreEmitDiagnostics(program)
    .filter((d) => d.file !== undefined && files.has(d.file.fileName))
    .map((d) => {
      const { line } = d.file!.getLineAndCharacterOfPosition(d.start ?? 0);
      return `${d.file!.fileName}:${line + 1}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
    });
}

it('every ts block in README.md, docs/client.md and docs/broker.md type-checks against the package', async () => {
  const { readFile } = await import('node:fs/promises');
  const blocks: string[] = [];
  for (const page of PAGES_WITH_CODE) {
    const found = typeScriptBlocks(await readFile(join(root, page), 'utf8'));
    expect(found.length, page).toBeGreaterThanOrEqual(1);
    blocks.push(...found);
  }
  const files = new Map(blocks.map((code, i) => [join(root, 'examples', `readme-block-${i + 1}.ts`), code]));
  expect(typeErrors(files)).toEqual([]);
}, 180_000);
