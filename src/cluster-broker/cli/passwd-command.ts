/**
 * `quorate-broker passwd FILE USER`: sets USER's password in the users file FILE (created if
 * missing): reads the password from stdin (on a terminal: prompts twice without echo; otherwise
 * the first line), hashes it with salted scrypt and adds or replaces USER's line. The file is
 * replaced atomically and left at mode 0600.
 */
import { randomBytes } from 'node:crypto';
import { chmod, readFile, rename, writeFile } from 'node:fs/promises';
import { FILE_MODE } from '../files/file-modes.js';
import { hashPassword } from '../server/password-hash.js';
import { badUserName, withUserLine } from '../server/users.js';
import { reportUsageProblem } from './flags.js';
import type { CliInput, CliIo } from './io.js';
import { explainSystemError } from './system-errors.js';

export const PASSWD_USAGE = `Usage: quorate-broker passwd FILE USER

Sets USER's password in the users file FILE (created if missing; mode 0600): reads the password
from stdin (prompting twice without echo on a terminal; otherwise the first line of stdin) and
adds or replaces USER's line with a salted scrypt hash. Then restart the broker (--users FILE).
`;

/** Reads one line from a terminal without echoing it. */
function promptHidden(input: CliInput, io: CliIo, prompt: string): Promise<string> {
  io.stderr.write(prompt);
  return new Promise((resolve, reject) => {
    let text = '';
    input.setRawMode?.(true);
    input.resume();
    const done = (err?: Error): void => {
      input.off('data', onData);
      input.setRawMode?.(false);
      input.pause();
      io.stderr.write('\n');
      if (err) reject(err);
      else resolve(text);
    };
    const onData = (chunk: Buffer | string): void => {
      for (const ch of chunk.toString()) {
        if (ch === '\r' || ch === '\n') {
          done();
          return;
        }
        if (ch === '\u0003' || ch === '\u0004') {
          done(new Error('cancelled'));
          return;
        }
        if (ch === '\u007f' || ch === '\b') text = text.slice(0, -1);
        else text += ch;
      }
    };
    input.on('data', onData);
  });
}

/** The first line of a piped stdin (without its line ending). */
async function firstLine(input: CliInput): Promise<string> {
  let all = '';
  for await (const chunk of input) {
    all += chunk.toString();
    if (all.includes('\n')) break;
  }
  return all.split(/\r?\n/)[0] ?? '';
}

export async function runPasswdCommand(argv: readonly string[], io: CliIo): Promise<number> {
  if (argv.includes('-h') || argv.includes('--help')) {
    io.stdout.write(PASSWD_USAGE);
    return 0;
  }
  if (argv.length !== 2 || argv.some((a) => a.startsWith('-'))) {
    const problem = argv.find((a) => a.startsWith('-'));
    return reportUsageProblem(
      'quorate-broker passwd',
      new Error(problem !== undefined ? `unknown flag ${problem}` : 'give a users FILE and a USER name'),
      io.stderr,
    );
  }
  const [file, user] = argv as [string, string];
  const bad = badUserName(user);
  if (bad !== undefined) {
    io.stderr.write(`${bad}\n`);
    return 2;
  }
  const input = io.stdin ?? (process.stdin as CliInput);
  let password: string;
  try {
    if (input.isTTY) {
      password = await promptHidden(input, io, `Password for ${user}: `);
      const again = await promptHidden(input, io, 'Again: ');
      if (again !== password) {
        io.stderr.write('the passwords differ; nothing changed\n');
        return 1;
      }
    } else {
      password = await firstLine(input);
    }
  } catch (err) {
    io.stderr.write(`${(err as Error).message}; nothing changed\n`);
    return 1;
  }
  if (password === '') {
    io.stderr.write('an empty password is refused; nothing changed\n');
    return 1;
  }
  let text = '';
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
      io.stderr.write(`cannot read ${file}: ${explainSystemError(err)}\n`);
      return 1;
    }
  }
  const next = withUserLine(text, user, await hashPassword(password));
  const tmp = `${file}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(tmp, next, { mode: FILE_MODE });
    await chmod(tmp, FILE_MODE);
    await rename(tmp, file);
  } catch (err) {
    io.stderr.write(`cannot write ${file}: ${explainSystemError(err)}\n`);
    return 1;
  }
  io.stderr.write(`${user} set in ${file}\n`);
  return 0;
}
