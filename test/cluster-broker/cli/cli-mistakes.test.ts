/**
 * Command-line mistakes as a newcomer makes them: one line saying what is wrong (no AMQP condition
 * prefix, no node parseArgs wording, no raw ENOENT), a pointer to --help, exit 2 for usage and 1
 * for a start that failed. The whole usage text is printed only by --help.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../src/cluster-broker/cli/run-cli.js';

async function run(argv: string[]): Promise<{ code: number; stderr: string; stdout: string }> {
  let stderr = '';
  let stdout = '';
  const code = await runCli(argv, {
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
  });
  return { code, stderr, stdout };
}

function lines(text: string): string[] {
  return text.split('\n').filter((l) => l !== '');
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'quorate-cli-mistakes-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('quorate-broker usage mistakes: one line, then see --help, exit 2', () => {
  const cases: Array<[string[], RegExp, string]> = [
    [
      ['--port', '-1'],
      /^quorate-broker: --port needs a value; a value starting with '-' is written --port=VALUE$/,
      'quorate-broker',
    ],
    [['--port=-1'], /^quorate-broker: --port must be an integer in 0\.\.65535, got '-1'$/, 'quorate-broker'],
    [['--bogus'], /^quorate-broker: unknown flag --bogus$/, 'quorate-broker'],
    [['--port'], /^quorate-broker: --port needs a value$/, 'quorate-broker'],
    [['--dedup=yes'], /^quorate-broker: --dedup takes no value$/, 'quorate-broker'],
    [['stray'], /^unknown subcommand 'stray'/, ''],
    [
      ['cluster', '--nodes', 'x'],
      /^quorate-broker cluster: --nodes must be an integer/,
      'quorate-broker cluster',
    ],
    [['node'], /^quorate-broker node: --id is required$/, 'quorate-broker node'],
    [
      ['--ws-port=x'],
      /^quorate-broker: --ws-port must be an integer in 0\.\.65535, got 'x'$/,
      'quorate-broker',
    ],
    [
      ['--ws-allow-origin', 'https://a.example'],
      /^quorate-broker: --ws-allow-origin needs --ws-port$/,
      'quorate-broker',
    ],
    [
      ['--ws-port', '0', '--ws-allow-origin', 'https://a.example/path'],
      /^quorate-broker: --ws-allow-origin takes origins like https:\/\/app\.example/,
      'quorate-broker',
    ],
    [
      ['cluster', '--ws-allow-origin', 'https://a.example'],
      /^quorate-broker cluster: --ws-allow-origin needs --ws-base-port$/,
      'quorate-broker cluster',
    ],
    [
      ['cluster', '--ws-base-port', 'x'],
      /^quorate-broker cluster: --ws-base-port must be an integer/,
      'quorate-broker cluster',
    ],
    [['status'], /^quorate-broker status: give at least one URL$/, 'quorate-broker status'],
    [
      ['passwd', 'only-a-file'],
      /^quorate-broker passwd: give a users FILE and a USER name$/,
      'quorate-broker passwd',
    ],
  ];
  for (const [argv, first, command] of cases) {
    it(argv.join(' '), async () => {
      const r = await run(argv);
      expect(r.code).toBe(2);
      const out = lines(r.stderr);
      expect(out[0]).toMatch(first);
      expect(r.stderr).not.toMatch(/amqp:|Usage:|ERR_PARSE_ARGS|Did you forget/);
      if (command !== '') {
        expect(out).toHaveLength(2);
        expect(out[1]).toBe(`see '${command} --help'`);
      }
    });
  }

  it('--help still prints the whole usage, on stdout, exit 0', async () => {
    const r = await run(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /^Usage: quorate-broker \[--port 5672\] \[--host 127\.0\.0\.1\] \[--data-dir DIR\]/,
    );
    expect(r.stderr).toBe('');
  });
});

describe('start failures name the file and the fix, not a raw system error', () => {
  it('a missing --users file', async () => {
    const missing = join(dir, 'no-such-users.txt');
    const r = await run(['--port', '0', '--users', missing]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `cannot start the broker: ${missing}: no such file or directory (check the flag that names it)`,
    );
    expect(r.stderr).not.toMatch(/ENOENT/);
  });

  it('a --users path that is a directory', async () => {
    const r = await run(['--port', '0', '--users', dir]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('is a directory where a file was expected');
    expect(r.stderr).not.toMatch(/EISDIR/);
  });
});
