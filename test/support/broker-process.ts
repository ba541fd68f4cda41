/**
 * Starts `quorate-broker` (any subcommand) as a real process through tsx: the one launcher of
 * the tests. `spawnBroker` waits for its JSON ready line; `launchBroker` only starts it and
 * collects its output lines; `runBrokerToExit` (or `outputAtExit`) waits for it to exit on its
 * own (a refusal).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

const ENTRY = 'src/cluster-broker/cli/main.ts';
const ROOT = new URL('../..', import.meta.url).pathname;
/** Stderr lines kept by default: enough for diagnostics, bounded for long runs. */
const DEFAULT_KEPT_STDERR_LINES = 500;

/** A started broker process and its output so far. */
export interface BrokerChild {
  child: ChildProcess;
  /** Every stdout line so far. */
  stdout: string[];
  /** The first `keepStderrLines` stderr lines so far. */
  stderr: string[];
  /** Resolves with its JSON ready line (never, if it exits first). */
  ready: Promise<ReadyLine>;
  /** Resolves with the exit code (or signal name). */
  exited: Promise<number | string>;
  /** Resolves once it has exited and all its output is in `stdout` and `stderr`. */
  closed: Promise<number | string>;
}

export interface BrokerProcess extends BrokerChild {
  pid: number;
  port: number;
  /** The monitoring port (started with --http-port), else undefined. */
  httpPort: number | undefined;
}

export interface LaunchOptions {
  /** Go to node before the entry (e.g. `--max-old-space-size=256` for a small heap). */
  nodeFlags?: readonly string[];
  /**
   * 'pipe' keeps stdin open, so a `node` member sees the test process go away by its pipe
   * closing (src/cluster-broker/cli/node-command.ts); default 'ignore'.
   */
  stdin?: 'ignore' | 'pipe';
  /** How many stderr lines to keep (default 500); `Infinity` keeps all. */
  keepStderrLines?: number;
}

/** Starts the broker with `args` (a subcommand first, if any) and collects its output lines. */
export function launchBroker(args: readonly string[], opts: LaunchOptions = {}): BrokerChild {
  const child = spawn(process.execPath, [...(opts.nodeFlags ?? []), '--import', 'tsx', ENTRY, ...args], {
    cwd: ROOT,
    stdio: [opts.stdin ?? 'ignore', 'pipe', 'pipe'],
  });
  return watchBroker(child, opts.keepStderrLines);
}

/** Collects the output lines of a started broker and watches for its ready line and its exit. */
function watchBroker(child: ChildProcess, keepStderrLines = DEFAULT_KEPT_STDERR_LINES): BrokerChild {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const ready = new Promise<ReadyLine>((resolve) => {
    createInterface({ input: child.stdout! }).on('line', (l) => {
      stdout.push(l);
      const v = readyLine(l);
      if (v !== undefined) resolve(v);
    });
  });
  createInterface({ input: child.stderr! }).on('line', (l) => {
    if (stderr.length < keepStderrLines) stderr.push(l);
  });
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)),
  );
  const closed = new Promise<number | string>((resolve) =>
    child.once('close', (code, signal) => resolve(code ?? signal ?? -1)),
  );
  return { child, stdout, stderr, ready, exited, closed };
}

/**
 * Runs the broker until it exits on its own (a refusal): its exit code and its whole stdout and
 * stderr. See `outputAtExit`.
 */
export function runBrokerToExit(args: readonly string[], opts: LaunchOptions = {}): Promise<BrokerOutput> {
  return outputAtExit(launchBroker(args, { keepStderrLines: Number.POSITIVE_INFINITY, ...opts }));
}

/** A broker's exit code (or signal name) and its output, lines joined with '\n'. */
export interface BrokerOutput {
  code: number | string;
  stdout: string;
  stderr: string;
}

/**
 * Waits for a launched broker to exit and returns its output. If it gets as far as its ready
 * line it is stopped, so a test expecting a refusal fails rather than hangs.
 */
export async function outputAtExit(run: BrokerChild): Promise<BrokerOutput> {
  void run.ready.then(() => run.child.kill('SIGTERM'));
  const code = await run.closed;
  return { code, stdout: run.stdout.join('\n'), stderr: run.stderr.join('\n') };
}

/** Starts the broker and waits for its ready line (see `awaitBrokerReady`). */
export async function spawnBroker(
  args: readonly string[],
  timeoutMs = 30_000,
  opts: LaunchOptions = {},
): Promise<BrokerProcess> {
  return brokerReady(launchBroker(args, opts), timeoutMs);
}

/**
 * Waits for a started broker's JSON ready line on stdout (rejecting if it exits first or stays
 * silent past `timeoutMs`), keeping its first stderr lines for diagnostics.
 */
export async function awaitBrokerReady(child: ChildProcess, timeoutMs: number): Promise<BrokerProcess> {
  return brokerReady(watchBroker(child), timeoutMs);
}

async function brokerReady(run: BrokerChild, timeoutMs: number): Promise<BrokerProcess> {
  let timer: NodeJS.Timeout | undefined;
  const ready = await Promise.race([
    run.ready,
    new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`broker: no ready line within ${timeoutMs} ms: ${run.stderr.join('\n')}`)),
        timeoutMs,
      );
    }),
    run.exited.then((code): never => {
      throw new Error(`broker exited (${code}) before ready: ${run.stderr.join('\n')}`);
    }),
  ]).finally(() => clearTimeout(timer));
  return { ...run, pid: ready.pid, port: ready.amqpPort, httpPort: ready.httpPort };
}

export interface ReadyLine {
  amqpPort: number;
  pid: number;
  httpPort?: number;
}

/** The broker's JSON ready line, if `line` is it. */
function readyLine(line: string): ReadyLine | undefined {
  try {
    const v = JSON.parse(line) as { ready?: boolean } & ReadyLine;
    return v.ready === true ? v : undefined;
  } catch {
    return undefined; // not the ready line
  }
}
