/**
 * The changes of the HTTP API: declare (`PUT /api/queues/NAME`), purge
 * (`DELETE /api/queues/NAME/messages`) and delete (`DELETE /api/queues/NAME`), done by the queue
 * administration of the member that got them (../server/queue-admin.ts: a follower's commit goes
 * through its backend to the leader, as every broker event does).
 *
 * A web page elsewhere must not be able to make one (docs/security.md#http-changes): every change
 * is a request a browser will not send across sites without a CORS preflight, which this server
 * never answers (a custom header on every change, `Content-Type: application/json` on a PUT), and
 * every change carries the basic credentials of a user holding the `manage` grant; a broker
 * without users refuses changes over HTTP altogether.
 */
import type { IncomingMessage } from 'node:http';
import { parseManagementPath } from '../server/management-paths.js';
import type { Permissions } from '../server/permission-check.js';
import { mayManage } from '../server/permissions.js';
import type { QueueAdmin } from '../server/queue-admin.js';
import {
  DECLARE_ARGUMENTS,
  type DeclareQueueArguments,
  declareArgumentsFrom,
} from '../server/queue-admin-checks.js';
import { QueueAdminError, statusOfAdminError } from '../server/queue-admin-errors.js';
import type { HttpUserVerifier } from './basic-auth.js';

/** The header every change must carry, with the value `1`. */
const CHANGE_HEADER = 'x-quorate-request';

/** A declare's body is a few arguments: anything longer is refused before it is read. */
const MAX_CHANGE_BODY_BYTES = 16 * 1024;

/** A path under `/api/queues/`: one queue, or its messages. */
export type QueueRoute = { kind: 'queue' | 'messages'; name: string } | { kind: 'bad'; reason: string };

/** `path` as a queue route (the management node's paths, under `/api`), or undefined when it is not under `/api/queues/`. */
export function queueRoute(path: string): QueueRoute | undefined {
  const prefix = '/api';
  if (!path.startsWith(`${prefix}/queues/`)) return undefined;
  const route = parseManagementPath(path.slice(prefix.length), path);
  if (route.kind === 'queue' || route.kind === 'messages' || route.kind === 'bad') return route;
  return { kind: 'bad', reason: `no resource at '${path}'` }; // not reached: a name follows /queues/
}

/** What a change is answered with. */
export interface ChangeAnswer {
  status: number;
  body: unknown;
  /** Ask for credentials (401). */
  challenge?: boolean;
}

/** What answering a change needs from the server. */
export interface ChangeContext {
  admin: QueueAdmin;
  /** Undefined: the broker has no users. */
  verify: HttpUserVerifier | undefined;
  permissions: Permissions | undefined;
}

const fail = (status: number, error: string, challenge = false): ChangeAnswer =>
  challenge ? { status, body: { error }, challenge } : { status, body: { error } };

/** Answers a PUT or DELETE on `route`; never rejects for a request's fault. */
export async function answerQueueChange(
  req: IncomingMessage,
  route: { kind: 'queue' | 'messages'; name: string },
  ctx: ChangeContext,
): Promise<ChangeAnswer> {
  const method = req.method;
  const allowed = route.kind === 'queue' ? ['PUT', 'DELETE'] : ['DELETE'];
  if (method === undefined || !allowed.includes(method))
    return fail(405, `${route.kind === 'queue' ? 'PUT or DELETE' : 'DELETE'} only`);
  // the checks that make a request non-simple come first: a cross-site attempt costs no password check
  if (req.headers[CHANGE_HEADER] !== '1')
    return fail(403, `a change needs the header X-Quorate-Request: 1 (docs/security.md#http-changes)`);
  if (method === 'PUT' && !isJson(req.headers['content-type']))
    return fail(415, 'a declare needs Content-Type: application/json');
  if (ctx.verify === undefined)
    return fail(403, 'this broker has no users: changes over HTTP need --users (or use AMQP management)');
  const user = await ctx.verify(req);
  if (user === undefined) return fail(401, 'credentials required', true);
  if (!mayManage(ctx.permissions, user)) return fail(403, `user '${user}' has no manage grant`);
  try {
    if (route.kind === 'messages')
      return { status: 200, body: { name: route.name, purged: await ctx.admin.purgeQueue(route.name) } };
    if (method === 'DELETE')
      return { status: 200, body: { name: route.name, dropped: await ctx.admin.deleteQueue(route.name) } };
    const body = await readBody(req);
    if (typeof body === 'number')
      return fail(body, `the body must be JSON of at most ${MAX_CHANGE_BODY_BYTES} bytes`);
    const args = declareArguments(body);
    const r = await ctx.admin.declareQueue(route.name, args);
    return { status: r.created ? 201 : 200, body: r };
  } catch (err) {
    const failed = statusOfAdminError(err);
    if (failed === undefined) throw err;
    return fail(failed.status, failed.reason);
  }
}

function isJson(contentType: string | undefined): boolean {
  return contentType?.split(';')[0]?.trim().toLowerCase() === 'application/json';
}

/** The parsed JSON body (empty: `{}`), or the status to refuse it with (413, 400). */
async function readBody(req: IncomingMessage): Promise<unknown> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > MAX_CHANGE_BODY_BYTES) return 413;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_CHANGE_BODY_BYTES) return 413;
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8').trim();
  if (text === '') return {};
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return 400;
  }
}

const KNOWN_KEYS: ReadonlySet<string> = new Set(DECLARE_ARGUMENTS);

/** The declare arguments of a JSON body, checked key by key (QueueAdminError `invalid`). */
function declareArguments(body: unknown): DeclareQueueArguments {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new QueueAdminError('invalid', 'the body must be a JSON object of declare arguments');
  const given = body as Record<string, unknown>;
  for (const k of Object.keys(given))
    if (!KNOWN_KEYS.has(k))
      throw new QueueAdminError(
        'invalid',
        `unknown declare argument '${k}' (known: ${[...KNOWN_KEYS].join(', ')})`,
      );
  return declareArgumentsFrom((argument) => given[argument]);
}
