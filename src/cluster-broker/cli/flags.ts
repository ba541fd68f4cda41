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
 * One line for a command-line mistake, as Unix tools print it: what is wrong, without the AMQP
 * condition prefix our errors carry, and with node's parseArgs wording turned into ours.
 */
export function usageProblem(err: unknown): string {
  const e = err as { code?: unknown; description?: unknown; message?: unknown; cause?: unknown };
  const cause = e.cause as { code?: unknown } | undefined;
  if (typeof cause?.code === 'string' && cause.code.startsWith('ERR_PARSE_ARGS')) return usageProblem(cause);
  const text = typeof e.description === 'string' ? e.description : String(e.message ?? err);
  // node's parseArgs errors say what is wrong at length and in its own terms: keep the flag name.
  const flag = /'(-{1,2}[\w-]+)/.exec(text)?.[1];
  switch (e.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return `unknown flag ${flag ?? text}`;
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return `unexpected argument ${/'([^']*)'/.exec(text)?.[1] ?? text}: every value follows its --flag`;
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      if (/ambiguous/.test(text) && flag !== undefined)
        return `${flag} needs a value; a value starting with '-' is written ${flag}=VALUE`;
      if (/argument missing/.test(text) && flag !== undefined) return `${flag} needs a value`;
      if (flag !== undefined) return `${flag} takes no value`;
      return text;
  }
  return text.split('\n')[0] ?? text;
}

/** Writes a command-line mistake: one line naming the command, then where the rest is; exit 2. */
export function reportUsageProblem(command: string, err: unknown, stderr: { write(s: string): unknown }): 2 {
  stderr.write(`${command}: ${usageProblem(err)}\nsee '${command} --help'\n`);
  return 2;
}

/**
 * The parsed flags of a command, or its exit code when there is nothing to run: 2 after a bad
 * flag (one line on stderr, see reportUsageProblem), 0 after --help (the usage on stdout).
 */
export function flagsOrExit<A extends { help: boolean }>(
  command: string,
  argv: readonly string[],
  parse: (argv: readonly string[]) => A,
  usage: string,
  io: { stdout: { write(s: string): unknown }; stderr: { write(s: string): unknown } },
): A | number {
  let args: A;
  try {
    args = parse(argv);
  } catch (err) {
    return reportUsageProblem(command, err, io.stderr);
  }
  if (!args.help) return args;
  io.stdout.write(usage);
  return 0;
}
