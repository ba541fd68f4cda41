/**
 * Node's system errors (ENOENT, EACCES, EADDRINUSE, ...) in words an operator can act on: the
 * raw text ("ENOENT: no such file or directory, open 'u.txt'") names neither the flag nor the fix.
 */

interface SystemErrorFields {
  code?: unknown;
  path?: unknown;
  address?: unknown;
  port?: unknown;
  syscall?: unknown;
}

/** One line saying what failed and what to do, or the error's own message when it is not a system error. */
export function explainSystemError(err: unknown): string {
  const e = (err ?? {}) as SystemErrorFields & { message?: unknown };
  const path = typeof e.path === 'string' ? e.path : undefined;
  switch (e.code) {
    case 'ENOENT':
      return path !== undefined
        ? `${path}: no such file or directory (check the flag that names it)`
        : 'a file a flag names does not exist';
    case 'EACCES':
    case 'EPERM':
      if (e.syscall === 'listen' || e.syscall === 'bind')
        return `not allowed to listen on port ${String(e.port ?? '?')} (ports below 1024 need privileges: pick a higher --port)`;
      return `${path ?? 'a file'}: permission denied (give the broker's user access, or pick another path)`;
    case 'EISDIR':
      return `${path ?? 'a path a flag names'} is a directory where a file was expected`;
    case 'ENOTDIR':
      return `${path ?? 'a path'}: a part of it is a file, not a directory`;
    case 'EADDRINUSE':
      return `port ${String(e.port ?? '?')} on ${String(e.address ?? 'this host')} is already in use (pick another --port, or 0 for a free one)`;
    case 'EADDRNOTAVAIL':
      return `${String(e.address ?? 'the address')} is not an address of this machine (check --host)`;
    case 'ENOSPC':
      return `no space left on the device${path !== undefined ? ` of ${path}` : ''}`;
  }
  return String(e.message ?? err);
}
