#!/usr/bin/env node
/**
 * The `quorate-broker` bin. Subcommands:
 *   quorate-broker [--port ...]        a single-node broker (no subcommand, single-node-command.ts)
 *   quorate-broker cluster ...         a supervised local cluster (cluster-command.ts)
 *   quorate-broker node ...            one cluster member (node-command.ts)
 *   quorate-broker status URL...       the members' overview as a table (status-command.ts)
 *   quorate-broker passwd FILE USER    a user's password in a users file (passwd-command.ts)
 *   quorate-broker queues ACTION ...   list, create, purge, delete queues over AMQP (queues-command.ts)
 */
import { runCli } from './run-cli.js';

runCli(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr }).then(
  (code) => {
    // stdout may be a pipe: exit once it is flushed
    process.stdout.write('', () => process.exit(code));
  },
  (err: unknown) => {
    process.stderr.write(
      `quorate-broker: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exit(1);
  },
);
