/** Standard input as a CLI subcommand reads it (a terminal may switch echo off). */
export interface CliInput extends AsyncIterable<Buffer | string> {
  isTTY?: boolean;
  setRawMode?(raw: boolean): unknown;
  resume(): unknown;
  pause(): unknown;
  on(event: 'data', listener: (chunk: Buffer | string) => void): unknown;
  off(event: 'data', listener: (chunk: Buffer | string) => void): unknown;
}

/** What a CLI subcommand talks to (the real process streams, or a test's). */
export interface CliIo {
  stdout: { write(chunk: string): unknown };
  stderr: { write(chunk: string): unknown };
  /** Where a subcommand reads input (`passwd`). Default `process.stdin`. */
  stdin?: CliInput;
  /** Where SIGTERM / SIGINT arrive. Default `process`. */
  signals?: Pick<NodeJS.EventEmitter, 'on' | 'off'>;
}

/** A subcommand: resolves with the process exit code. */
export type Subcommand = (argv: readonly string[], io: CliIo) => Promise<number>;
