/**
 * The package as a user gets it: `npm pack` of the built package, installed into a fresh app in
 * the OS temp dir, and nothing of this repository in reach. Every TypeScript block of the README
 * and every file of `examples/` type-checks there against the installed declarations (ESM, as a
 * new app is written), and the installed package runs in ESM and in CommonJS: a broker from
 * `quorate/broker`, one message through it with the client from `quorate`.
 *
 * The README's quick start runs as pasted there, against the package's own `quorate-broker`.
 *
 * Needs `npm run build` first (CI builds before testing).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAGES_WITH_CODE, typeScriptBlocks } from './markdown-code.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/**
 * Packages the examples use that are not the package's runtime dependencies (the tracing SDK,
 * the test runner): an app installs them itself, so here they are linked to this repository's
 * copy. Nothing else is: a runtime dependency missing from package.json must fail this test.
 */
const APP_OWN_DEPENDENCIES = [
  '@opentelemetry/api',
  '@opentelemetry/core',
  '@opentelemetry/sdk-trace-base',
  'vitest',
];

let app = '';

beforeAll(() => {
  if (!existsSync(join(root, 'dist', 'index.d.ts')))
    throw new Error('dist/ is missing: run `npm run build` first');
  app = mkdtempSync(join(tmpdir(), 'quorate-fresh-app-'));
  const packed = execFileSync(npm, ['pack', '--ignore-scripts', '--silent', '--pack-destination', app], {
    cwd: root,
    encoding: 'utf8',
  })
    .trim()
    .split('\n')
    .pop()!;
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify({ name: 'fresh-app', private: true, type: 'module' }),
  );
  // The runtime dependencies come from npm's cache (filled by `npm ci`), else from the registry.
  execFileSync(
    npm,
    ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', '--silent', `./${packed}`],
    { cwd: app, encoding: 'utf8' },
  );
  for (const dep of APP_OWN_DEPENDENCIES) {
    const at = join(app, 'node_modules', dep);
    if (existsSync(at)) continue; // already there as a dependency's dependency
    mkdirSync(dirname(at), { recursive: true });
    symlinkSync(join(root, 'node_modules', dep), at);
  }
}, 240_000);

afterAll(() => {
  if (app) rmSync(app, { recursive: true, force: true });
});

/** Type errors in the app's own files and in the installed package's declarations. */
function typeErrors(files: string[]): string[] {
  const modules = join(root, 'node_modules');
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ['lib.es2022.d.ts', 'lib.esnext.disposable.d.ts'],
    strict: true,
    noEmit: true,
    skipLibCheck: false,
    types: ['node'],
    typeRoots: [join(modules, '@types')],
  };
  const program = ts.createProgram(files, options);
  const installed = join(app, 'node_modules', 'quorate');
  return ts
    .getPreEmitDiagnostics(program)
    .filter(
      (d) =>
        d.file !== undefined && (d.file.fileName.startsWith(installed) || files.includes(d.file.fileName)),
    )
    .map((d) => {
      const { line } = d.file!.getLineAndCharacterOfPosition(d.start ?? 0);
      return `${d.file!.fileName.slice(app.length + 1)}:${line + 1}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
    });
}

describe('the packed package in a fresh app', () => {
  it('installs what the package needs at run time and nothing of the repository', () => {
    const installed = JSON.parse(
      readFileSync(join(app, 'node_modules', 'quorate', 'package.json'), 'utf8'),
    ) as {
      dependencies: Record<string, string>;
    };
    for (const dep of Object.keys(installed.dependencies))
      expect(existsSync(join(app, 'node_modules', dep))).toBe(true);
    expect(existsSync(join(app, 'node_modules', 'quorate', 'src'))).toBe(false);
    expect(existsSync(join(app, 'node_modules', 'quorate', 'LICENSE'))).toBe(true);
  });

  it('type-checks every README block and every example against the installed declarations', () => {
    const blocks = PAGES_WITH_CODE.flatMap((page) =>
      typeScriptBlocks(readFileSync(join(root, page), 'utf8')),
    );
    expect(blocks.length).toBeGreaterThanOrEqual(3);
    const dir = join(app, 'examples');
    mkdirSync(dir);
    const files: string[] = [];
    blocks.forEach((code, i) => {
      const file = join(dir, `readme-block-${i + 1}.ts`);
      writeFileSync(file, code);
      files.push(file);
    });
    const examples = readdirSync(join(root, 'examples')).filter((f) => f.endsWith('.ts'));
    expect(examples.length).toBeGreaterThanOrEqual(5);
    for (const f of examples) {
      copyFileSync(join(root, 'examples', f), join(dir, f));
      files.push(join(dir, f));
    }
    expect(typeErrors(files)).toEqual([]);
  }, 180_000);

  const ROUND_TRIP = `
    const broker = await startBroker({ host: '127.0.0.1', port: 0 });
    const conn = await connect({ urls: broker.url, reconnect: false });
    const sender = await conn.openSender('fresh-app');
    await sender.send({ body: { total: 42 } });
    const receiver = await conn.openReceiver('fresh-app');
    const d = await receiver.receive({ timeoutMs: 20000 });
    await d.accept();
    await conn.close();
    await broker.stop();
    process.stdout.write(JSON.stringify(d.message.body));`;

  it('runs as ESM: a message through a broker from quorate/broker', () => {
    const code = `import { connect } from 'quorate'; import { startBroker } from 'quorate/broker';${ROUND_TRIP}`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', code], {
      cwd: app,
      encoding: 'utf8',
    });
    expect(JSON.parse(out)).toEqual({ total: 42 });
  }, 60_000);

  it('runs as CommonJS: a message through a broker from quorate/broker', () => {
    const code = `const { connect } = require('quorate'); const { startBroker } = require('quorate/broker');
      (async () => {${ROUND_TRIP}})().catch((err) => { console.error(err); process.exit(1); });`;
    const out = execFileSync(process.execPath, ['--input-type=commonjs', '-e', code], {
      cwd: app,
      encoding: 'utf8',
    });
    expect(JSON.parse(out)).toEqual({ total: 42 });
  }, 60_000);

  it('runs the README quick start as pasted, against the installed quorate-broker, in ESM and CommonJS', async () => {
    const quickStart = typeScriptBlocks(readFileSync(join(root, 'README.md'), 'utf8'))[0]!;
    expect(quickStart).toContain("from 'quorate'");
    const broker = spawn(join(app, 'node_modules', '.bin', 'quorate-broker'), ['--port', '0'], { cwd: app });
    try {
      const port = await readyPort(broker);
      const pasted = quickStart.replaceAll('127.0.0.1:5672', `127.0.0.1:${port}`);
      expect(pasted).not.toBe(quickStart);
      const esm = ts.transpileModule(pasted, {
        compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
      }).outputText;
      writeFileSync(join(app, 'quick-start.mjs'), esm);
      const esmOut = execFileSync(process.execPath, ['quick-start.mjs'], { cwd: app, encoding: 'utf8' });
      expect(esmOut.trim().split('\n')).toEqual(['accepted', '42']);
      // the same lines as a CommonJS user writes them: require, and the awaits inside a function
      const body = pasted.replace("import { connect } from 'quorate';", '');
      const cjs = ts.transpileModule(`const { connect } = require('quorate');\n(async () => {${body}})();`, {
        compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 },
      }).outputText;
      writeFileSync(join(app, 'quick-start.cjs'), cjs);
      const cjsOut = execFileSync(process.execPath, ['quick-start.cjs'], { cwd: app, encoding: 'utf8' });
      expect(cjsOut.trim().split('\n')).toEqual(['accepted', '42']);
    } finally {
      broker.kill('SIGTERM');
    }
  }, 120_000);
});

/** The AMQP port of a `quorate-broker` process, from its ready line. */
function readyPort(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line !== undefined) resolve((JSON.parse(line) as { amqpPort: number }).amqpPort);
    });
    child.once('exit', (code) => reject(new Error(`quorate-broker exited (${code}) before its ready line`)));
  });
}
