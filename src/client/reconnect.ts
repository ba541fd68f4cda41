/**
 * Dialing the members of the pool until one completes Open: p-retry runs the attempts
 * (exponential backoff, randomized, limits by attempts and by total time); the pool decides which
 * member is next (not-quorate members last, after their own backoff). Used by connect() and by
 * every failover alike.
 */
import pRetry, { AbortError } from 'p-retry';
import { DEFAULT_MAX_FRAME_SIZE } from '../codec/index.js';
import { AmqpError, ClientError } from '../errors.js';
import {
  describeServer,
  type HeaderDeadline,
  type ServerAddress,
  type ServerPool,
} from '../failover/index.js';
import { isNotQuorate, MEMBERSHIP_CAPABILITY } from '../wire-extensions.js';
import {
  describeCause,
  isAuthFailure,
  isNobodyThere,
  isPermanentConnectFailure,
  isSilentPeer,
} from './connect-errors.js';
import { now, type PhysicalConnection } from './physical.js';
import { connectPhysical } from './transport.js';
import type { ConnectionEvents, ConnectOptions, Logger, ReconnectOptions } from './types.js';
import { silenceWatchOptions, unresponsiveFloorMs } from './unresponsive.js';

/** The idle timeout we declare in Open unless told otherwise, ms. */
export const DEFAULT_IDLE_TIMEOUT_MS = 10_000;

export interface ResolvedReconnect {
  enabled: boolean;
  retries: number;
  maxTimeMs: number;
  minTimeout: number;
  maxTimeout: number;
  factor: number;
  randomize: boolean;
  attemptTimeoutMs: number;
}

export function resolveReconnect(r: ReconnectOptions | false | undefined): ResolvedReconnect {
  const o = r === false ? {} : (r ?? {});
  return {
    enabled: r !== false,
    retries: o.maxAttempts === undefined ? Number.POSITIVE_INFINITY : Math.max(0, o.maxAttempts - 1),
    maxTimeMs: o.maxTimeMs ?? 60_000,
    minTimeout: o.initialDelayMs ?? 50,
    maxTimeout: o.maxDelayMs ?? 2_000,
    factor: o.factor ?? 2,
    randomize: o.randomize ?? true,
    attemptTimeoutMs: o.attemptTimeoutMs ?? 10_000,
  };
}

/** A suspected member is held back for this many first-byte deadlines (docs/failover.md#silent-member). */
const SUSPECT_HOLD_DEADLINES = 2;

/**
 * How long a member that stopped answering is tried last. Dialling it while it is still stopped
 * costs one first-byte deadline, so the hold is short: the running members get two whole dial
 * deadlines first, and a member that ran again after a short stall is a candidate again by the
 * next failover (docs/failover.md#silent-member). Only a connection with the suspicion on (so
 * with a first-byte deadline) ever suspects a member.
 */
export function unresponsiveHoldMs(firstByte: HeaderDeadline, attemptTimeoutMs: number): number {
  return SUSPECT_HOLD_DEADLINES * firstByte.deadlineMs(attemptTimeoutMs);
}

export function isRedirect(e: unknown): e is AmqpError {
  return e instanceof AmqpError && e.condition === 'amqp:connection:redirect';
}

export function abortReason(reason: unknown): Error {
  return reason instanceof Error ? reason : new ClientError('quorate:aborted', 'aborted', { cause: reason });
}

export interface DialPlan {
  pool: ServerPool<unknown>;
  options: ConnectOptions;
  reconnect: ResolvedReconnect;
  containerId: string;
  logger: Logger | undefined;
  /**
   * Learns how soon members send their first byte; during a failover, a dialled member silent
   * past its deadline is given up (docs/failover.md#silent-member). Absent: no such deadline.
   */
  firstByte?: HeaderDeadline;
  /** Aborted when the connection closes: stops waiting and dialing. */
  stop: AbortSignal;
  onReconnecting(info: ConnectionEvents['reconnecting'][0]): void;
  /** Every failed attempt, with its cause (logged at info by the caller). */
  onAttemptFailed(info: { attempt: number; url: string; error: Error; permanent: boolean }): void;
}

/**
 * Try members until one completes Open. `initial`: connect(): the first attempt is not reported
 * as `reconnecting`; a SASL failure ends it at once, and so does a permanent failure (DNS, TLS
 * verification, not AMQP) once every member failed that way (at once with one URL). During a failover only SASL failures stop the retries (a member's DNS name may be missing
 * while it restarts). `reconnect: false` means one attempt.
 */
export async function dialMembers(
  plan: DialPlan,
  initial: boolean,
): Promise<{ phys: PhysicalConnection; server: ServerAddress<unknown> }> {
  const { pool, options, reconnect: r, stop } = plan;
  let lastFailureAt = now();
  const startedAt = lastFailureAt;
  let attempt = 0;
  let lastError: Error | undefined;
  const deadMembers = new Set<string>();
  const idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  const unresponsiveMs = unresponsiveFloorMs(options.unresponsiveTimeoutMs, r.enabled);
  const unresponsive =
    unresponsiveMs !== undefined ? silenceWatchOptions(unresponsiveMs, idleTimeoutMs) : undefined;
  // connect(): each configured member's first-pass failure that means "nobody there" (refused,
  // not AMQP, closed without a word); once every member has one, connect() ends (docs/failover.md#first-connect)
  const firstPass =
    initial && r.enabled && options.waitOnFirstConnect !== true ? new Map<string, string>() : undefined;
  let answer: ClientError | undefined;
  const run = async () => {
    attempt++;
    if (stop.aborted) throw new AbortError(abortReason(stop.reason));
    const pick = pool.next(now());
    const wait = pick.notBefore - now();
    if (wait > 0) await sleep(wait, stop);
    const url = describeServer(pick.server);
    if (!initial || attempt > 1) {
      const info: ConnectionEvents['reconnecting'][0] = {
        attempt,
        delayMs: Math.max(0, Math.round(now() - lastFailureAt)),
        url,
      };
      if (lastError) info.error = lastError;
      plan.onReconnecting(info);
    }
    const remaining = r.maxTimeMs - (now() - startedAt);
    const timeoutMs = Math.max(100, Math.min(r.attemptTimeoutMs, remaining));
    // a failover's dial must not wait out the attempt timeout on a member that hangs; the first
    // connect keeps its own rules (docs/failover.md#first-connect)
    const firstByteDeadlineMs = !initial && plan.firstByte ? plan.firstByte.deadlineMs(timeoutMs) : undefined;
    try {
      const phys = await connectPhysical({
        server: pick.server,
        containerId: plan.containerId,
        idleTimeoutMs,
        ...(unresponsive ? { unresponsive } : {}),
        maxFrameSize: options.maxFrameSize ?? DEFAULT_MAX_FRAME_SIZE,
        hostname: options.hostname,
        username: options.username,
        password: options.password,
        tls: options.tls,
        dial: options.dial,
        logger: plan.logger,
        timeoutMs,
        ...(firstByteDeadlineMs !== undefined ? { firstByteDeadlineMs } : {}),
        ...(plan.firstByte ? { onFirstByte: (ms: number) => plan.firstByte?.observe(ms) } : {}),
        signal: stop,
        desiredCapabilities: [MEMBERSHIP_CAPABILITY],
      });
      // a member may answer Open and Close at once (e.g. not quorate): that is a failed attempt
      if (phys.lostError) throw phys.lostError;
      return { phys, server: pick.server };
    } catch (e) {
      const error = e instanceof Error ? e : new Error(String(e));
      lastFailureAt = now();
      if (isNotQuorate(error)) pool.notQuorate(pick.server, now());
      // a member that accepts but never speaks is likely stopped: try it last, as a hung one
      else if (isSilentPeer(error) && plan.firstByte)
        pool.unresponsive(pick.server, now(), unresponsiveHoldMs(plan.firstByte, r.attemptTimeoutMs));
      else pool.failed(pick.server, error, now());
      if (isRedirect(error)) pool.redirect(error.info, pick.server);
      if (stop.aborted) throw new AbortError(abortReason(stop.reason));
      lastError = error;
      // a member-specific permanent cause (DNS, TLS, not AMQP) leaves the other members to try;
      // connect() ends once every member failed that way
      if (initial && isPermanentConnectFailure(error)) deadMembers.add(pick.server.key);
      const permanent = isAuthFailure(error) || (initial && deadMembers.size >= pool.servers().length);
      plan.onAttemptFailed({ attempt, url, error, permanent });
      if (permanent) throw new AbortError(error);
      if (firstPass !== undefined && isNobodyThere(error)) {
        firstPass.set(pick.server.key, `${url}: ${describeCause(error)}`);
        if (pool.servers().every((s) => firstPass.has(s.key))) {
          answer = nobodyAnswered(firstPass, error);
          throw new AbortError(answer);
        }
      }
      throw error;
    }
  };
  try {
    return await pRetry(run, {
      retries: r.enabled ? r.retries : 0,
      factor: r.factor,
      minTimeout: r.minTimeout,
      maxTimeout: r.maxTimeout,
      randomize: r.randomize,
      maxRetryTime: r.maxTimeMs,
      signal: stop,
    });
  } catch (e) {
    if (stop.aborted) throw abortReason(stop.reason);
    if (answer !== undefined) throw answer;
    const error = lastError ?? (e as Error);
    // one attempt (reconnect: false) or a permanent cause: that attempt's error is the answer
    if (attempt === 1 || isAuthFailure(error) || (initial && deadMembers.size >= pool.servers().length))
      throw error;
    throw new ClientError(
      'quorate:reconnect-exhausted',
      `no member reachable after ${attempt} attempts in ${Math.round(now() - startedAt)} ms (last: ${describeCause(error)})`,
      { cause: error },
    );
  }
}

/** connect()'s answer when every configured member failed its first attempt that way. */
function nobodyAnswered(causes: Map<string, string>, last: Error): ClientError {
  const members = [...causes.values()];
  return new ClientError(
    'quorate:connect-failed',
    `no member answered (${members.join('; ')}); to wait for brokers that are still starting, pass waitOnFirstConnect: true`,
    { cause: last, info: { members } },
  );
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(abortReason(signal.reason));
      return;
    }
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(abortReason(signal.reason));
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
