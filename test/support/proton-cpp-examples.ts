/**
 * Qpid Proton's C++ examples as test peers: compiled from the sources Debian ships
 * (libqpid-proton11-dev-examples) against Debian's libqpid-proton-cpp (libqpid-proton-cpp12-dev),
 * cached in the OS temp dir by a hash of what went into them, and run as processes whose output
 * lines a test reads.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, realpathSync, renameSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const SOURCES = '/usr/share/proton/examples/cpp';
const COMPILER = '/usr/bin/g++';
const LIBRARY = '/usr/lib/x86_64-linux-gnu/libqpid-proton-cpp.so';
const HEADER = '/usr/include/proton/container.hpp';
/** Examples built at once: the CI machine has 2 cores. */
const PARALLEL_BUILDS = 2;

/** What each example needs, and the Debian package that brings it. */
const REQUIREMENTS: readonly { path: string; pkg: string }[] = [
  { path: COMPILER, pkg: 'g++' },
  { path: HEADER, pkg: 'libqpid-proton-cpp12-dev' },
  { path: LIBRARY, pkg: 'libqpid-proton-cpp12-dev' },
  { path: join(SOURCES, 'options.hpp'), pkg: 'libqpid-proton11-dev-examples' },
];

/** Throws naming the apt package to install when the compiler, library or sources are missing. */
export function checkProtonCppInstalled(): void {
  const missing = REQUIREMENTS.filter((r) => !existsSync(r.path));
  if (missing.length === 0) return;
  const pkgs = [...new Set(missing.map((r) => r.pkg))];
  throw new Error(
    `missing ${missing.map((r) => r.path).join(', ')}: apt-get install -y ${pkgs.join(' ')} (.ci/run installs them)`,
  );
}

/** The cache key of one example: its source, the shared options header and the library's version. */
function buildKey(name: string): string {
  const h = createHash('sha256');
  h.update(readFileSync(join(SOURCES, `${name}.cpp`)));
  h.update(readFileSync(join(SOURCES, 'options.hpp')));
  h.update(realpathSync(LIBRARY)); // the versioned file name: a library upgrade rebuilds
  return h.digest('hex').slice(0, 16);
}

function compile(source: string, out: string): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(
      COMPILER,
      ['-std=c++11', `-I${SOURCES}`, source, '-o', out, '-lqpid-proton-cpp'],
      { timeout: 300_000 },
      (err, _stdout, stderr) =>
        err ? reject(new Error(`g++ ${source}: ${err.message}\n${stderr}`)) : resolve(),
    );
  });
}

/**
 * Paths of the compiled examples, by name: built when not cached yet, one g++ per example, at most
 * two at a time. A build writes a temporary file and renames it, so concurrent runs never see half
 * a binary.
 */
export async function buildProtonCppExamples<N extends string>(
  names: readonly N[],
): Promise<Record<N, string>> {
  checkProtonCppInstalled();
  const dir = join(tmpdir(), 'quorate-proton-cpp-examples');
  mkdirSync(dir, { recursive: true });
  const paths = Object.fromEntries(names.map((n) => [n, join(dir, `${n}-${buildKey(n)}`)])) as Record<
    N,
    string
  >;
  const todo = names.filter((n) => !existsSync(paths[n]));
  const worker = async (): Promise<void> => {
    for (let n = todo.shift(); n !== undefined; n = todo.shift()) {
      const partial = `${paths[n]}.${process.pid}.partial`;
      await compile(join(SOURCES, `${n}.cpp`), partial);
      renameSync(partial, paths[n]);
    }
  };
  await Promise.all(Array.from({ length: PARALLEL_BUILDS }, worker));
  return paths;
}

/** A running example: its output lines so far and its exit. */
export interface ExampleProcess {
  readonly pid: number;
  /** stdout, one entry per line, as printed so far. */
  readonly lines: string[];
  /** stderr so far. */
  stderr(): string;
  /** Resolves when `pred(lines)` holds; rejects (with the output) after `timeoutMs` or at exit. */
  waitForLines(pred: (lines: readonly string[]) => boolean, what: string, timeoutMs?: number): Promise<void>;
  /** Its exit code (null: killed by a signal). */
  readonly exited: Promise<number | null>;
  /** Its exit code; after `timeoutMs` it is killed and this rejects with its output. */
  waitForExit(timeoutMs: number): Promise<number | null>;
  /** SIGKILL by PID, resolved once it has exited. */
  stop(): Promise<void>;
}

/** Starts an example binary with `args`. */
export function startExample(binary: string, args: readonly string[]): ExampleProcess {
  const child: ChildProcess = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  if (child.pid === undefined) throw new Error(`cannot start ${binary}`);
  const pid = child.pid;
  const lines: string[] = [];
  let partial = '';
  let err = '';
  const listeners = new Set<() => void>();
  child.stdout?.on('data', (b: Buffer) => {
    const parts = (partial + b.toString()).split('\n');
    partial = parts.pop() ?? '';
    lines.push(...parts);
    for (const l of listeners) l();
  });
  child.stderr?.on('data', (b: Buffer) => {
    err += b.toString();
  });
  let done = false;
  const exited = new Promise<number | null>((resolve) => {
    child.on('close', (code) => {
      done = true;
      if (partial !== '') lines.push(partial);
      partial = '';
      resolve(code);
      for (const l of listeners) l();
    });
  });
  const describe = (): string => `${binary} ${args.join(' ')}\nstdout:\n${lines.join('\n')}\nstderr:\n${err}`;
  return {
    pid,
    lines,
    stderr: () => err,
    exited,
    waitForLines(pred, what, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          if (pred(lines)) finish();
          else if (done) finish(new Error(`exited before ${what}: ${describe()}`));
        };
        const timer = setTimeout(
          () => finish(new Error(`no ${what} after ${timeoutMs} ms: ${describe()}`)),
          timeoutMs,
        );
        const finish = (e?: Error): void => {
          clearTimeout(timer);
          listeners.delete(check);
          if (e) reject(e);
          else resolve();
        };
        listeners.add(check);
        check();
      });
    },
    async waitForExit(timeoutMs) {
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        if (!done) process.kill(pid, 'SIGKILL');
      }, timeoutMs);
      const code = await exited;
      clearTimeout(timer);
      if (timedOut) throw new Error(`still running after ${timeoutMs} ms: ${describe()}`);
      return code;
    },
    async stop() {
      if (!done) process.kill(pid, 'SIGKILL');
      await exited;
    },
  };
}

/** Runs an example to its end (killed after `timeoutMs`, then rejects): its exit code and output. */
export async function runExample(
  binary: string,
  args: readonly string[],
  timeoutMs = 60_000,
): Promise<{ code: number | null; lines: string[]; stderr: string }> {
  const p = startExample(binary, args);
  const code = await p.waitForExit(timeoutMs);
  return { code, lines: p.lines, stderr: p.stderr() };
}
