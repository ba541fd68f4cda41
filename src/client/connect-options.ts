/**
 * connect()'s argument check: what is missing or wrong is said at once, as a TypeError or
 * RangeError with a Node-style `code`, before any socket is opened (plain JavaScript callers get
 * no compiler to tell them).
 */
import { ArgumentRangeError, ArgumentTypeError } from '../errors.js';
import { parseServerUrl } from '../failover/index.js';
import type { ConnectOptions } from './types.js';

const EXAMPLE = "connect({ urls: 'amqp://localhost:5672' })";

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function checkNonNegative(owner: string, name: string, v: unknown, integer = false): void {
  if (v === undefined) return;
  if (typeof v !== 'number' || Number.isNaN(v))
    throw new ArgumentTypeError('ERR_INVALID_ARG_TYPE', `${owner}.${name} must be a number, got ${typeof v}`);
  if (v < 0 || (integer && Number.isFinite(v) && !Number.isInteger(v)))
    throw new ArgumentRangeError(
      `${owner}.${name} must be a non-negative ${integer ? 'integer' : 'number'}, got ${v}`,
    );
}

/** Throws a TypeError / RangeError (with `code`) naming the first thing wrong in `options`. */
export function checkConnectOptions(options: unknown): asserts options is ConnectOptions {
  if (!isRecord(options)) {
    throw new ArgumentTypeError(
      'ERR_INVALID_ARG_TYPE',
      `connect() needs an options object with urls, e.g. ${EXAMPLE}; got ${options === undefined ? 'nothing' : typeof options}`,
    );
  }
  const urls = options.urls;
  const list = typeof urls === 'string' ? [urls] : urls;
  if (!Array.isArray(list) || list.length === 0 || list.some((u) => typeof u !== 'string')) {
    throw new ArgumentTypeError(
      'ERR_INVALID_ARG_TYPE',
      `connect() options.urls must be a URL string or a non-empty array of them, e.g. ${EXAMPLE}`,
    );
  }
  for (const url of list as string[]) parseServerUrl(url);
  for (const name of ['timeoutMs', 'idleTimeoutMs'] as const)
    checkNonNegative('options', name, options[name]);
  checkNonNegative('options', 'maxFrameSize', options.maxFrameSize, true);
  if (options.unresponsiveTimeoutMs !== false)
    checkNonNegative('options', 'unresponsiveTimeoutMs', options.unresponsiveTimeoutMs);
  if (options.logger !== undefined && !isRecord(options.logger))
    throw new ArgumentTypeError('ERR_INVALID_ARG_TYPE', 'options.logger must be an object (pino-compatible)');
  if (options.dial !== undefined && typeof options.dial !== 'function')
    throw new ArgumentTypeError(
      'ERR_INVALID_ARG_TYPE',
      'options.dial must be a function (target, signal) returning a connected stream',
    );
  if (options.signal !== undefined && !(options.signal instanceof AbortSignal))
    throw new ArgumentTypeError('ERR_INVALID_ARG_TYPE', 'options.signal must be an AbortSignal');
  const r = options.reconnect;
  if (r !== undefined && r !== false) {
    if (!isRecord(r))
      throw new ArgumentTypeError('ERR_INVALID_ARG_TYPE', 'options.reconnect must be false or an object');
    for (const name of ['maxTimeMs', 'attemptTimeoutMs', 'initialDelayMs', 'maxDelayMs', 'factor'])
      checkNonNegative('options.reconnect', name, r[name]);
    checkNonNegative('options.reconnect', 'maxAttempts', r.maxAttempts, true);
    if (r.maxAttempts === 0) throw new ArgumentRangeError('options.reconnect.maxAttempts must be at least 1');
  }
  const b = options.bufferLimit;
  if (b !== undefined) {
    if (!isRecord(b))
      throw new ArgumentTypeError('ERR_INVALID_ARG_TYPE', 'options.bufferLimit must be an object');
    checkNonNegative('options.bufferLimit', 'messages', b.messages, true);
    checkNonNegative('options.bufferLimit', 'bytes', b.bytes, true);
  }
  if (options.onFull !== undefined && options.onFull !== 'wait' && options.onFull !== 'reject')
    throw new ArgumentTypeError('ERR_INVALID_ARG_VALUE', `options.onFull must be 'wait' or 'reject'`);
  if (
    options.membershipPolicy !== undefined &&
    options.membershipPolicy !== 'replace' &&
    options.membershipPolicy !== 'add'
  )
    throw new ArgumentTypeError(
      'ERR_INVALID_ARG_VALUE',
      `options.membershipPolicy must be 'replace' or 'add'`,
    );
}
