/**
 * The benches' command lines: the word after `flag` in `argv`, or undefined when the flag is
 * absent. One reading for every bench, so `--messages 5000` means the same everywhere.
 */
export function flagValue(argv: readonly string[], flag: string): string | undefined {
  const i = argv.indexOf(flag);
  return i >= 0 ? argv[i + 1] : undefined;
}
