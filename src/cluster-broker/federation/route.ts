/**
 * Loop prevention (docs/federation.md#loops): a moved message carries, in the message annotation
 * `x-opt-quorate-route`, the cluster ids it was moved FROM, in order. A link into cluster L
 * refuses a message whose route already names L (it was on L before: a cycle) or that has been
 * moved `maxHops` times already; a refused message stays upstream for other consumers.
 */
import type { AmqpValue } from '../../codec/values.js';

/** The message annotation key (a contract of issue #12). */
export const ROUTE_ANNOTATION = 'x-opt-quorate-route';

/** The route a message carries now ([] when it was never moved; anything malformed reads as []). */
export function routeOf(annotations: Record<string, AmqpValue> | undefined): string[] {
  const v = annotations?.[ROUTE_ANNOTATION];
  if (!Array.isArray(v)) return [];
  return v.filter((id): id is string => typeof id === 'string');
}

/** Why a message may not move into `localClusterId`, or undefined when it may. */
export function routeRefusal(
  route: readonly string[],
  localClusterId: string,
  maxHops: number,
): string | undefined {
  if (route.includes(localClusterId)) return `its route already passed cluster '${localClusterId}'`;
  if (route.length >= maxHops) return `it was moved ${route.length} times (maxHops ${maxHops})`;
  return undefined;
}

/** The annotations of the moved copy: the route gains the cluster it leaves. */
export function withRoute(
  annotations: Record<string, AmqpValue> | undefined,
  route: readonly string[],
  fromClusterId: string,
): Record<string, AmqpValue> {
  return { ...annotations, [ROUTE_ANNOTATION]: [...route, fromClusterId] };
}
