/**
 * Named subcommands of `quorate-broker`. To add one, add an entry (argv after the name, io) ->
 * exit code. `node` (one cluster member) is node-command.ts, `cluster` cluster-command.ts, `status` status-command.ts,
 * `queues` queues-command.ts.
 */

import { runClusterCommand } from './cluster-command.js';
import type { Subcommand } from './io.js';
import { runNodeCommand } from './node-command.js';
import { runPasswdCommand } from './passwd-command.js';
import { runQueuesCommand } from './queues-command.js';
import { runStatusCommand } from './status-command.js';

export const SUBCOMMANDS: Record<string, Subcommand> = {
  cluster: (argv, io) => runClusterCommand(argv, io),
  node: (argv, io) => runNodeCommand(argv, io),
  status: (argv, io) => runStatusCommand(argv, io),
  passwd: (argv, io) => runPasswdCommand(argv, io),
  queues: (argv, io) => runQueuesCommand(argv, io),
};
