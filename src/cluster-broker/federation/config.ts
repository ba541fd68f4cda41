/**
 * The federation configuration (docs/federation.md#configuration): `--federation FILE` on the
 * single broker, `node` and `cluster`, and the `federation` option of startBroker / startMember /
 * startCluster. Checked whole before anything starts: every mistake is a FederationConfigError
 * naming the file and the upstream.
 */
import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import { FederationConfigError } from './errors.js';

/** Forwards a message at most this many times unless `maxHops` says otherwise (docs/federation.md#loops). */
export const DEFAULT_MAX_HOPS = 4;
/** After a link's upstream connection is given up, the next attempt waits this long (ms). */
export const DEFAULT_RECONNECT_DELAY_MS = 2000;

/** One upstream as written in the file (`upstreams[i]`). */
export interface UpstreamConfig {
  /** Names the link in logs and state; unique in the file. */
  name: string;
  /** The upstream's members (`amqp://host:port` / `amqps://...`): the link fails over across them. */
  urls: string[];
  /** SASL PLAIN user name; absent: SASL ANONYMOUS. */
  username?: string;
  /** A file holding the password (trailing newline ignored); relative to the configuration file. */
  passwordFile?: string;
  /** Queues whose messages move from the upstream's queue of the same name to ours. */
  queues?: string[];
  /** Topics whose every message is republished from the upstream's topic of the same name to ours. */
  topics?: string[];
  /** This upstream's hop limit (overrides the top-level one). */
  maxHops?: number;
  /** Wait between connection attempts once the client gave up failing over, ms. */
  reconnectDelayMs?: number;
}

/** The whole file. */
export interface FederationConfig {
  /** Where messages come from. */
  upstreams: UpstreamConfig[];
  /** Default hop limit of every upstream (default 4). */
  maxHops?: number;
}

/** One upstream, checked, with its password read and its defaults filled in. */
export interface ResolvedUpstream {
  name: string;
  urls: string[];
  username: string | undefined;
  password: string | undefined;
  queues: string[];
  topics: string[];
  maxHops: number;
  reconnectDelayMs: number;
}

const TOP_KEYS = new Set(['upstreams', 'maxHops']);
const UPSTREAM_KEYS = new Set([
  'name',
  'urls',
  'username',
  'passwordFile',
  'queues',
  'topics',
  'maxHops',
  'reconnectDelayMs',
]);

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function unknownKeys(o: Record<string, unknown>, allowed: Set<string>, where: string): void {
  for (const k of Object.keys(o)) {
    if (!allowed.has(k))
      throw new FederationConfigError(`${where}: unknown key '${k}' (known: ${[...allowed].join(', ')})`);
  }
}

function stringList(v: unknown, where: string, key: string): string[] | undefined {
  if (v === undefined) return undefined;
  if (!Array.isArray(v) || v.some((s) => typeof s !== 'string' || s === ''))
    throw new FederationConfigError(`${where}: '${key}' must be a list of non-empty strings`);
  return v as string[];
}

function positiveInteger(v: unknown, where: string, key: string): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1)
    throw new FederationConfigError(
      `${where}: '${key}' must be a positive integer, got ${JSON.stringify(v)}`,
    );
  return v;
}

function checkUrl(url: string, where: string): void {
  let scheme: string;
  try {
    scheme = new URL(url).protocol;
  } catch {
    throw new FederationConfigError(`${where}: '${url}' is not a URL`);
  }
  if (scheme !== 'amqp:' && scheme !== 'amqps:')
    throw new FederationConfigError(`${where}: '${url}' must be amqp:// or amqps://`);
}

/** Checks the shape of a parsed file (no I/O): throws FederationConfigError on the first mistake. */
export function checkFederationConfig(value: unknown, source = 'federation config'): FederationConfig {
  if (!isRecord(value)) throw new FederationConfigError(`${source}: must be a JSON object with 'upstreams'`);
  unknownKeys(value, TOP_KEYS, source);
  const maxHops = positiveInteger(value.maxHops, source, 'maxHops');
  if (!Array.isArray(value.upstreams))
    throw new FederationConfigError(`${source}: 'upstreams' must be a list`);
  const names = new Set<string>();
  const upstreams = value.upstreams.map((u: unknown, i): UpstreamConfig => {
    const at = `${source}: upstreams[${i}]`;
    if (!isRecord(u)) throw new FederationConfigError(`${at} must be an object`);
    unknownKeys(u, UPSTREAM_KEYS, at);
    if (typeof u.name !== 'string' || u.name === '')
      throw new FederationConfigError(`${at}: 'name' must be a non-empty string`);
    const where = `${source}: upstream '${u.name}'`;
    if (names.has(u.name)) throw new FederationConfigError(`${where} is named twice`);
    names.add(u.name);
    const urls = stringList(u.urls, where, 'urls');
    if (urls === undefined || urls.length === 0)
      throw new FederationConfigError(`${where}: 'urls' must list at least one amqp:// URL`);
    for (const url of urls) checkUrl(url, where);
    if (u.username !== undefined && (typeof u.username !== 'string' || u.username === ''))
      throw new FederationConfigError(`${where}: 'username' must be a non-empty string`);
    if (u.passwordFile !== undefined && (typeof u.passwordFile !== 'string' || u.passwordFile === ''))
      throw new FederationConfigError(`${where}: 'passwordFile' must be a file name`);
    if (u.passwordFile !== undefined && u.username === undefined)
      throw new FederationConfigError(`${where}: 'passwordFile' needs 'username'`);
    const queues = stringList(u.queues, where, 'queues') ?? [];
    const topics = stringList(u.topics, where, 'topics') ?? [];
    const seen = new Map<string, string>();
    for (const [kind, list] of [
      ['queue', queues],
      ['topic', topics],
    ] as const) {
      for (const name of list) {
        const before = seen.get(name);
        if (before === kind) throw new FederationConfigError(`${where}: ${kind} '${name}' is listed twice`);
        // one upstream address is either a queue or a topic (docs/topics.md), never both
        if (before !== undefined)
          throw new FederationConfigError(`${where}: '${name}' is listed as both a queue and a topic`);
        seen.set(name, kind);
      }
    }
    const out: UpstreamConfig = { name: u.name, urls, queues, topics };
    if (u.username !== undefined) out.username = u.username as string;
    if (u.passwordFile !== undefined) out.passwordFile = u.passwordFile as string;
    const hops = positiveInteger(u.maxHops, where, 'maxHops');
    if (hops !== undefined) out.maxHops = hops;
    const delay = positiveInteger(u.reconnectDelayMs, where, 'reconnectDelayMs');
    if (delay !== undefined) out.reconnectDelayMs = delay;
    return out;
  });
  // a queue fed by two upstreams is fine (work from both); fed twice by one is a mistake (above)
  const config: FederationConfig = { upstreams };
  if (maxHops !== undefined) config.maxHops = maxHops;
  return config;
}

/**
 * Checks `config` and reads its password files (relative names from `baseDir`, the file's own
 * folder for `--federation FILE`, else the working directory).
 */
export async function resolveFederationConfig(
  config: FederationConfig,
  baseDir = process.cwd(),
  source = 'federation config',
): Promise<ResolvedUpstream[]> {
  const checked = checkFederationConfig(config, source);
  return Promise.all(
    checked.upstreams.map(async (u): Promise<ResolvedUpstream> => {
      let password: string | undefined;
      if (u.passwordFile !== undefined) {
        const file = isAbsolute(u.passwordFile) ? u.passwordFile : resolve(baseDir, u.passwordFile);
        try {
          password = (await readFile(file, 'utf8')).replace(/\r?\n$/, '');
        } catch (err) {
          throw new FederationConfigError(
            `${source}: upstream '${u.name}': cannot read passwordFile ${file}: ${(err as Error).message}`,
            { cause: err },
          );
        }
      }
      return {
        name: u.name,
        urls: u.urls,
        username: u.username,
        password,
        queues: u.queues ?? [],
        topics: u.topics ?? [],
        maxHops: u.maxHops ?? checked.maxHops ?? DEFAULT_MAX_HOPS,
        reconnectDelayMs: u.reconnectDelayMs ?? DEFAULT_RECONNECT_DELAY_MS,
      };
    }),
  );
}

/** Reads and checks `--federation FILE` (password files relative to it). */
export async function loadFederationFile(file: string): Promise<ResolvedUpstream[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new FederationConfigError(`cannot read federation file ${file}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new FederationConfigError(`${file}: not valid JSON: ${(err as Error).message}`, { cause: err });
  }
  return resolveFederationConfig(checkFederationConfig(parsed, file), dirname(resolve(file)), file);
}
