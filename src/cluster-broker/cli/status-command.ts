/**
 * `quorate-broker status URL...`: the `/api/overview` of one member or all of them, as a terminal
 * table. It follows the member list: every member named in an answer's `members[].httpUrl` is
 * asked too (`--no-follow`: only the URLs given), so one URL shows the whole cluster.
 */
import { parseArgs } from 'node:util';
import { MonitoringError } from '../http/errors.js';
import type { Overview } from '../http/types.js';
import { reportUsageProblem } from './flags.js';
import type { CliIo } from './io.js';
import { formatTable } from './table.js';

export const STATUS_USAGE = `Usage: quorate-broker status URL... [--user U] [--password P] [--no-follow] [--json]

Prints each member's overview (GET URL/api/overview) as a table: role, leader, term, commit and
applied index, quorate, serving, queues, connections, consumers, uptime, the client totals of the
whole cluster, and the lag of every member as the first answering leader (else member) sees it. Follows the member list of the answers unless
--no-follow. Credentials: --user/--password, user:password@ in the URL, or QUORATE_USER and
QUORATE_PASSWORD. Exit code 0 when every member answered and serves, 1 otherwise, 2 on bad usage.

  URL            a member's monitoring address, e.g. http://127.0.0.1:15672
  --user U       HTTP basic user (brokers with a users file)
  --password P   its password
  --no-follow    ask only the URLs given
  --json         print the overviews as a JSON array instead of a table
  --timeout MS   per request (default 3000)
`;

export interface MemberAnswer {
  url: string;
  overview?: Overview;
  error?: string;
}

/** Fetches the overview of `urls` and, unless `follow` is false, of every member they name. */
export async function collectOverviews(
  urls: readonly string[],
  opts: { follow: boolean; authorization?: string; timeoutMs: number },
): Promise<MemberAnswer[]> {
  const answers: MemberAnswer[] = [];
  const asked = new Set<string>();
  let pending = urls.map(normalize);
  while (pending.length > 0) {
    const batch = pending.filter((u) => !asked.has(u));
    for (const u of batch) asked.add(u);
    const got = await Promise.all(batch.map((u) => fetchOverview(u, opts)));
    answers.push(...got);
    pending = [];
    if (!opts.follow) break;
    for (const a of got)
      for (const m of a.overview?.members ?? []) if (m.httpUrl) pending.push(normalize(m.httpUrl));
  }
  return answers;
}

function normalize(url: string): string {
  const u = new URL(url);
  return `${u.protocol}//${u.host}`;
}

async function fetchOverview(
  url: string,
  opts: { authorization?: string; timeoutMs: number },
): Promise<MemberAnswer> {
  try {
    const headers: Record<string, string> = {};
    if (opts.authorization) headers.authorization = opts.authorization;
    const res = await fetch(`${url}/api/overview`, { headers, signal: AbortSignal.timeout(opts.timeoutMs) });
    if (!res.ok) return { url, error: `HTTP ${res.status}` };
    return { url, overview: (await res.json()) as Overview };
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code;
    return { url, error: cause ?? (err as Error).message };
  }
}

/** The table: one row per member answer, then each member's lag as seen by the leader. */
export function formatStatusTable(answers: readonly MemberAnswer[]): string {
  const rows: string[][] = [
    [
      'MEMBER',
      'ROLE',
      'LEADER',
      'TERM',
      'COMMIT',
      'APPLIED',
      'QUORATE',
      'SERVING',
      'QUEUES',
      'CONNS',
      'CONSUMERS',
      'UP',
      'URL',
    ],
  ];
  // a member that does not answer is named by what the others know of it
  const idByUrl = new Map<string, string>();
  for (const a of answers)
    for (const m of a.overview?.members ?? []) if (m.httpUrl) idByUrl.set(normalize(m.httpUrl), m.id);
  const nameOf = (a: MemberAnswer): string => a.overview?.member ?? idByUrl.get(a.url) ?? '?';
  const sorted = [...answers].sort(
    (a, b) => nameOf(a).localeCompare(nameOf(b)) || a.url.localeCompare(b.url),
  );
  for (const a of sorted) {
    const o = a.overview;
    if (!o) {
      rows.push([
        nameOf(a),
        `unreachable (${a.error ?? 'no answer'})`,
        '',
        '',
        '',
        '',
        '',
        '',
        '',
        '',
        '',
        a.url,
      ]);
      continue;
    }
    rows.push([
      o.member,
      o.role,
      o.leader ?? '-',
      String(o.term),
      String(o.commitIndex),
      String(o.appliedIndex),
      o.quorate ? 'yes' : 'NO',
      o.serving ? 'yes' : 'NO',
      String(o.queues),
      String(o.connections),
      String(o.consumers),
      duration(o.uptimeSeconds),
      a.url,
    ]);
  }
  let out = formatTable(rows);
  const viewer = sorted.find((a) => a.overview?.role === 'leader') ?? sorted.find((a) => a.overview);
  if (viewer?.overview && viewer.overview.members.length > 1) {
    const v = viewer.overview;
    const lagRows = [['MEMBER', 'REACHABLE', 'LAG', 'AMQP']];
    for (const m of v.members) {
      lagRows.push([m.id, m.reachable ? 'yes' : 'NO', m.lag === null ? '?' : String(m.lag), m.url ?? '?']);
    }
    out += `\nas ${v.member} (${v.role}) sees the members:\n${formatTable(lagRows)}`;
    const uncounted = v.uncountedMembers.length > 0 ? ` (not counted: ${v.uncountedMembers.join(', ')})` : '';
    out += `clients of the cluster: ${v.clusterConnections} connections, ${v.clusterConsumers} consumers${uncounted}\n`;
  }
  return out;
}

function duration(s: number): string {
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/** Credentials from the flags, else the first URL's user:password@, else the environment. */
function authorizationFor(urls: readonly string[], user?: string, password?: string): string | undefined {
  let u = user ?? process.env.QUORATE_USER;
  let p = password ?? process.env.QUORATE_PASSWORD;
  if (user === undefined) {
    for (const raw of urls) {
      const parsed = new URL(raw);
      if (parsed.username) {
        u = decodeURIComponent(parsed.username);
        p = decodeURIComponent(parsed.password);
        break;
      }
    }
  }
  if (u === undefined) return undefined;
  return `Basic ${Buffer.from(`${u}:${p ?? ''}`).toString('base64')}`;
}

export async function runStatusCommand(argv: readonly string[], io: CliIo): Promise<number> {
  let values: Record<string, string | boolean | undefined>;
  let urls: string[];
  let timeoutMs = 3000;
  try {
    const parsed = parseArgs({
      args: [...argv],
      options: {
        user: { type: 'string' },
        password: { type: 'string' },
        'no-follow': { type: 'boolean' },
        json: { type: 'boolean' },
        timeout: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: true,
    });
    values = parsed.values;
    urls = parsed.positionals;
    if (values.help) {
      io.stdout.write(STATUS_USAGE);
      return 0;
    }
    if (urls.length === 0)
      throw new MonitoringError('give at least one URL', { condition: 'amqp:invalid-field' });
    for (const u of urls) {
      const p = new URL(u);
      if (p.protocol !== 'http:') {
        throw new MonitoringError(`'${u}' is not an http:// URL`, { condition: 'amqp:invalid-field' });
      }
    }
    if (values.timeout !== undefined) {
      timeoutMs = Number(values.timeout);
      if (!/^\d+$/.test(values.timeout as string) || timeoutMs < 1) {
        throw new MonitoringError(`--timeout must be a positive integer, got '${values.timeout}'`, {
          condition: 'amqp:invalid-field',
        });
      }
    }
  } catch (err) {
    return reportUsageProblem('quorate-broker status', err, io.stderr);
  }
  const authorization = authorizationFor(
    urls,
    values.user as string | undefined,
    values.password as string | undefined,
  );
  const answers = await collectOverviews(urls, {
    follow: values['no-follow'] !== true,
    timeoutMs,
    ...(authorization ? { authorization } : {}),
  });
  if (values.json) io.stdout.write(`${JSON.stringify(answers, null, 2)}\n`);
  else io.stdout.write(formatStatusTable(answers));
  return answers.every((a) => a.overview?.serving === true) ? 0 : 1;
}
