/**
 * Command-line flags as every `quorate-broker` command reads them: node's strict `parseArgs`, and
 * integer values checked against their range. A bad flag throws the error of the command's own
 * family (`invalid`), so callers keep their error classes.
 */
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { AmqpError } from '../../errors.js';

type FlagTable = NonNullable<ParseArgsConfig['options']>;

/** What parseFlags() returns for the flag table `O`: each flag's value, typed by its table entry. */
export type ParsedFlags<O extends FlagTable> = ReturnType<
  typeof parseArgs<{ args: string[]; options: O; strict: true; allowPositionals: false }>
>['values'];

/** Makes the error a bad flag throws, from the message to show and what caused it. */
export type InvalidFlag = (message: string, cause?: unknown) => Error;

/** The default: AmqpError('amqp:invalid-field'). */
export const invalidField: InvalidFlag = (message, cause) =>
  new AmqpError('amqp:invalid-field', message, cause === undefined ? {} : { cause });

/** The parseArgs table of flags that take a value and switches that take none, plus -h/--help. */
export function flagTable<const V extends string, const S extends string>(
  valued: readonly V[],
  switches: readonly S[],
): { [K in V]: { type: 'string' } } & { [K in S]: { type: 'boolean' } } & {
  help: { type: 'boolean'; short: 'h' };
} {
  const table: FlagTable = { help: { type: 'boolean', short: 'h' } };
  for (const f of valued) table[f] = { type: 'string' };
  for (const f of switches) table[f] = { type: 'boolean' };
  return table as ReturnType<typeof flagTable<V, S>>;
}

/** The flags of `argv` (strict: unknown flags and positionals are errors). */
export function parseFlags<const O extends FlagTable>(
  argv: readonly string[],
  options: O,
  invalid: InvalidFlag = invalidField,
): ParsedFlags<O> {
  try {
    return parseArgs({ args: [...argv], options, strict: true, allowPositionals: false }).values;
  } catch (err) {
    throw invalid((err as Error).message, err);
  }
}

/** `--name`'s value as an integer in min..max, or undefined when the flag is absent. */
export function integerFlag(
  name: string,
  raw: string | undefined,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
  invalid: InvalidFlag = invalidField,
): number | undefined {
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < min || value > max)
    throw invalid(`--${name} must be an integer in ${min}..${max}, got '${raw}'`);
  return value;
}

/**
 * The parsed flags of a command, or its exit code when there is nothing to run: 2 after a bad
 * flag (the message and the usage on stderr), 0 after --help (the usage on stdout).
 */
export function flagsOrExit<A extends { help: boolean }>(
  argv: readonly string[],
  parse: (argv: readonly string[]) => A,
  usage: string,
  io: { stdout: { write(s: string): unknown }; stderr: { write(s: string): unknown } },
): A | number {
  let args: A;
  try {
    args = parse(argv);
  } catch (err) {
    io.stderr.write(`${(err as Error).message}\n${usage}`);
    return 2;
  }
  if (!args.help) return args;
  io.stdout.write(usage);
  return 0;
}
