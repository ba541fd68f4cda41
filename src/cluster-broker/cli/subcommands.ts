/**
 * Named subcommands of `quorate-broker`. To add one, add an entry (argv after the name, io) ->
 * exit code. `node` (one cluster member) is implemented by the cluster member module; until it
 * lands it answers with an error.
 */
import { runNodeCommand } from '../cluster/node-command.js';
import { runClusterCommand } from '../supervisor/cluster-command.js';
import type { Subcommand } from './io.js';

const notYet =
  (name: string): Subcommand =>
  async (_argv, io) => {
    io.stderr.write(`quorate-broker ${name}: not available in this build yet\n`);
    return 2;
  };

export const SUBCOMMANDS: Record<string, Subcommand> = {
  cluster: (argv, io) => runClusterCommand(argv, io),
  node: (argv, io) => runNodeCommand(argv, io),
};
