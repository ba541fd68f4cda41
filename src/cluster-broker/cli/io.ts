/** What a CLI subcommand talks to (the real process streams, or a test's). */
export interface CliIo {
  stdout: { write(chunk: string): unknown };
  stderr: { write(chunk: string): unknown };
  /** Where SIGTERM / SIGINT arrive. Default `process`. */
  signals?: Pick<NodeJS.EventEmitter, 'on' | 'off'>;
}

/** A subcommand: resolves with the process exit code. */
export type Subcommand = (argv: readonly string[], io: CliIo) => Promise<number>;
