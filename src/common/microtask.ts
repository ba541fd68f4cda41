/**
 * `microtask(fn)`: runs `fn` as a microtask, like `queueMicrotask(fn)`, without the per-call
 * cost Node's queueMicrotask has on a hot path. Node wraps every call in an `AsyncResource`
 * (with a `callback` property added after construction) and a bound function; besides the
 * allocations, once no such resource is alive at a full collection its hidden class dies, and
 * V8 throws away the optimized code of every function that saw one (Node's own runMicrotask,
 * emitDestroy, ... and our callers: "weak objects" in --trace-deopt), to compile it again on the
 * next burst (docs/architecture.md#client-receive-jit). A reaction on an already resolved
 * promise is queued at once, as queueMicrotask queues its task, so the order is the same.
 *
 * `fn` must not throw: a throw here is an unhandled rejection, not an uncaught exception.
 */
const RESOLVED: Promise<void> = Promise.resolve();

export function microtask(fn: () => void): void {
  void RESOLVED.then(fn);
}
