/**
 * Named subcommands of `quorate-broker`. To add one, add an entry (argv after the name, io) ->
 * exit code. `node` (one cluster member) is implemented in ../cluster/node-command.ts.
 */
import { runNodeCommand } from '../cluster/node-command.js';
import { runStatusCommand } from '../http/status-command.js';
import { runClusterCommand } from '../supervisor/cluster-command.js';
import type { Subcommand } from './io.js';

export const SUBCOMMANDS: Record<string, Subcommand> = {
  cluster: (argv, io) => runClusterCommand(argv, io),
  node: (argv, io) => runNodeCommand(argv, io),
  status: (argv, io) => runStatusCommand(argv, io),
};
