export {
  checkFederationConfig,
  DEFAULT_MAX_HOPS,
  type FederationConfig,
  loadFederationFile,
  type ResolvedUpstream,
  resolveFederationConfig,
  type UpstreamConfig,
} from './config.js';
export { FederationConfigError } from './errors.js';
export { Federation } from './federation.js';
export type { FederationLinkKind, FederationLinkPhase, FederationLinkState } from './link-state.js';
export { localQueuesOf } from './local-queues.js';
export { ROUTE_ANNOTATION } from './route.js';
