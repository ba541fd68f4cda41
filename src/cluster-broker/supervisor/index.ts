// Process supervision of local cluster members, and the test cluster built on it.
export { RestartBackoff } from './backoff.js';
export { type ClusterPlan, planCluster } from './cluster-plan.js';
export {
  brokerEntryNodeArgs,
  type ClusterMemberLaunch,
  type ClusterTlsFiles,
  defaultMemberCommand,
  memberNodeArgs,
} from './default-member-command.js';
export { SupervisorError } from './errors.js';
export {
  type MemberOutputHandler,
  MemberProcess,
  type MemberProcessExit,
  parseReadyLine,
} from './member-process.js';
export { allocateFreePorts } from './ports.js';
export { isProcessStopped, processAlive, waitForProcessState } from './process-state.js';
export {
  type MemberFederationLink,
  type StartClusterOptions,
  startCluster,
} from './start-cluster.js';
export { Supervisor, type SupervisorMemberSpec } from './supervisor.js';
export type { SupervisorOptions } from './supervisor-options.js';
export {
  DEFAULT_RESTART_POLICY,
  type MemberCommand,
  type MemberExit,
  type MemberInfo,
  type MemberReadyLine,
  type MemberRestart,
  type MemberState,
  memberUrl,
  type RestartPolicy,
  type SupervisorEvents,
  type SupervisorLogger,
} from './types.js';
