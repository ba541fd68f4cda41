/** Subcommand dispatch for the `quorate-broker` bin (main.ts is only the process glue). */
import type { CliIo, Subcommand } from './io.js';
import { runSingleNodeCommand } from './single-node-command.js';
import { SUBCOMMANDS } from './subcommands.js';

export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const first = argv[0];
  if (first !== undefined && !first.startsWith('-')) {
    const sub: Subcommand | undefined = SUBCOMMANDS[first];
    if (sub === undefined) {
      io.stderr.write(`unknown subcommand '${first}' (known: ${Object.keys(SUBCOMMANDS).join(', ')})\n`);
      return 2;
    }
    return sub(argv.slice(1), io);
  }
  return runSingleNodeCommand(argv, io);
}
