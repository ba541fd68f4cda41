/**
 * Which addresses each user may send to and receive from (`--permissions FILE`):
 *
 *   {"users": {"alice": {"send": ["orders", "events.*"], "receive": ["orders"], "monitor": true}},
 *    "anonymous": {"receive": ["public.*"]}}
 *
 * A pattern is an address whose segments may be wildcards. Segments are separated by `.` or `/`
 * (`events.eu.created`, `tenants/acme/orders`). In a pattern, `*` matches any run of characters
 * within one segment (possibly none), never a separator: `events.*` matches `events.created`,
 * not `events.eu.created`; `orders-*` matches `orders-eu`. A segment that is exactly `#` matches
 * any number of whole segments, none included: `events.#` matches `events`, `events.a` and
 * `events.a.b`; `#` alone matches every address.
 *
 * Without a permissions file every user may do everything. With one, a user it does not list
 * may do nothing, and a connection that did not log in (SASL ANONYMOUS or no SASL) gets the
 * `anonymous` entry (absent: nothing). Every admitted connection may read `$cluster/membership`
 * (a client needs it to fail over). `monitor` (default false) is for the broker's HTTP API:
 * `mayMonitor()`. `manage` (default false) is for queue administration (the `/management` node,
 * docs/management.md#grant): `mayManage()`.
 */
import { readFile } from 'node:fs/promises';
import { BrokerConfigError } from './config-error.js';
import type { Permissions as PublicPermissions } from './permission-check.js';

/** One user's grants, as in the file. */
export interface UserPermissions {
  /** Address patterns the user may send to. */
  send?: string[];
  /** Address patterns the user may receive from. */
  receive?: string[];
  /** May read the broker's HTTP monitoring API. Default false. */
  monitor?: boolean;
  /** May declare, purge and delete queues (the `/management` node). Default false. */
  manage?: boolean;
}

/** The permissions file, as JSON. */
export interface PermissionsConfig {
  /** Grants per user name; users not listed may do nothing. */
  users?: Record<string, UserPermissions>;
  /** Grants of connections that did not log in; absent: nothing. */
  anonymous?: UserPermissions;
}

/** Readable by every admitted connection whatever the permissions say. */
export const ALWAYS_READABLE = new Set(['$cluster/membership']);

type Matcher = (address: string) => boolean;

interface CompiledGrants {
  send: Matcher;
  receive: Matcher;
  monitor: boolean;
  manage: boolean;
}

const SEPARATOR = /[./]/;

const escapeRegex = (s: string): string => s.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');

/** Compiles one pattern (see the module comment) to a test on addresses. */
export function compilePattern(pattern: string): Matcher {
  if (!pattern.includes('*') && !/(^|[./])#([./]|$)/.test(pattern)) return (a) => a === pattern;
  const segs = pattern.split(SEPARATOR);
  const seps = (pattern.match(/[./]/g) ?? []).map(escapeRegex);
  const last = segs.length - 1;
  let re = '';
  for (let i = 0; i <= last; i++) {
    const s = segs[i]!;
    const before = i > 0 ? seps[i - 1]! : '';
    if (s === '#') {
      // zero or more whole segments; a leading or middle "#" takes the separator after it
      if (last === 0) re += '.*';
      else if (i === last) re += `(?:${before}.*)?`;
      else re += `${before}(?:.*${seps[i]!})?`;
      continue;
    }
    if (i > 0 && segs[i - 1] !== '#') re += before;
    re += s.split('*').map(escapeRegex).join('[^./]*');
  }
  const regex = new RegExp(`^${re}$`, 's');
  return (a) => regex.test(a);
}

function compileList(list: string[] | undefined): Matcher {
  const ms = (list ?? []).map(compilePattern);
  return (a) => ms.some((m) => m(a));
}

function compileGrants(g: UserPermissions | undefined): CompiledGrants {
  return {
    send: compileList(g?.send),
    receive: compileList(g?.receive),
    monitor: g?.monitor === true,
    manage: g?.manage === true,
  };
}

const NOTHING: CompiledGrants = compileGrants(undefined);

/** A compiled permissions file. */
export class Permissions implements PublicPermissions {
  private readonly users = new Map<string, CompiledGrants>();
  private readonly anonymous: CompiledGrants;

  constructor(
    /** The permissions file this was compiled from. */
    readonly config: PermissionsConfig,
  ) {
    for (const [user, g] of Object.entries(config.users ?? {})) this.users.set(user, compileGrants(g));
    this.anonymous = compileGrants(config.anonymous);
  }

  private grants(user: string | undefined): CompiledGrants {
    if (user === undefined) return this.anonymous;
    return this.users.get(user) ?? NOTHING;
  }

  /** May `user` (undefined: anonymous) attach a link that sends to `address`? */
  maySend(user: string | undefined, address: string): boolean {
    return this.grants(user).send(address);
  }

  /** May `user` (undefined: anonymous) attach a link that receives from `address`? */
  mayReceive(user: string | undefined, address: string): boolean {
    return ALWAYS_READABLE.has(address) || this.grants(user).receive(address);
  }

  /** May `user` (undefined: anonymous) read the broker's HTTP monitoring API? */
  mayMonitor(user: string | undefined): boolean {
    return this.grants(user).monitor;
  }

  /** May `user` (undefined: anonymous) administer queues (the `/management` node)? */
  mayManage(user: string | undefined): boolean {
    return this.grants(user).manage;
  }
}

/**
 * May `user` administer queues? True for everyone when the broker has no permissions file (as for
 * messaging); with one, only for users whose entry says `"manage": true`.
 */
export function mayManage(permissions: PublicPermissions | undefined, user: string | undefined): boolean {
  return permissions === undefined || permissions.mayManage(user);
}

/**
 * For the broker's HTTP API: may `user` (undefined: a client that did not log in) read the
 * broker's monitoring data? True for everyone when the broker has no permissions file (as for
 * messaging); with one, only for users whose entry says `"monitor": true`.
 */
export function mayMonitor(permissions: PublicPermissions | undefined, user: string | undefined): boolean {
  return permissions === undefined || permissions.mayMonitor(user);
}

function checkGrants(g: unknown, where: string): UserPermissions {
  if (typeof g !== 'object' || g === null || Array.isArray(g)) {
    throw new BrokerConfigError(`${where}: expected an object with "send", "receive", "monitor", "manage"`);
  }
  const out: UserPermissions = {};
  for (const [k, v] of Object.entries(g)) {
    if (k === 'send' || k === 'receive') {
      if (!Array.isArray(v) || !v.every((p) => typeof p === 'string' && p !== '')) {
        throw new BrokerConfigError(`${where}.${k}: expected an array of non-empty address patterns`);
      }
      for (const p of v as string[]) {
        const bad = badPattern(p);
        if (bad) throw new BrokerConfigError(`${where}.${k}: '${p}': ${bad}`);
      }
      out[k] = v as string[];
    } else if (k === 'monitor' || k === 'manage') {
      if (typeof v !== 'boolean') throw new BrokerConfigError(`${where}.${k}: expected true or false`);
      out[k] = v;
    } else {
      throw new BrokerConfigError(`${where}: unknown key "${k}" (known: send, receive, monitor, manage)`);
    }
  }
  return out;
}

function badPattern(p: string): string | undefined {
  const segs = p.split(SEPARATOR);
  for (let i = 0; i < segs.length; i++) {
    const s = segs[i]!;
    if (s.includes('#') && s !== '#') return '"#" must be a whole segment';
    if (s === '#' && segs[i + 1] === '#') return '"#" twice in a row';
  }
  return undefined;
}

/**
 * The `permissions` option as the server uses it: one compiled by parsePermissions or
 * loadPermissionsFile as is, a document compiled (and checked) now.
 */
export function compilePermissions(given: PublicPermissions | PermissionsConfig): PublicPermissions {
  return given instanceof Permissions ? given : parsePermissions(given);
}

/** Validates a parsed permissions document; throws BrokerConfigError naming the bad part. */
export function parsePermissions(doc: unknown, source = 'permissions'): PublicPermissions {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
    throw new BrokerConfigError(`${source}: expected a JSON object {"users": {...}, "anonymous": {...}}`);
  }
  const config: PermissionsConfig = {};
  for (const [k, v] of Object.entries(doc)) {
    if (k === 'users') {
      if (typeof v !== 'object' || v === null || Array.isArray(v)) {
        throw new BrokerConfigError(`${source}: "users" must be an object of user -> grants`);
      }
      config.users = {};
      for (const [user, g] of Object.entries(v))
        config.users[user] = checkGrants(g, `${source}: users.${user}`);
    } else if (k === 'anonymous') {
      config.anonymous = checkGrants(v, `${source}: anonymous`);
    } else {
      throw new BrokerConfigError(`${source}: unknown key "${k}" (known: users, anonymous)`);
    }
  }
  return new Permissions(config);
}

/** Reads and validates a permissions JSON file; throws BrokerConfigError if it is invalid. */
export async function loadPermissionsFile(path: string): Promise<PublicPermissions> {
  const text = await readFile(path, 'utf8');
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new BrokerConfigError(`${path}: not valid JSON (${(err as Error).message})`, { cause: err });
  }
  return parsePermissions(doc, path);
}
