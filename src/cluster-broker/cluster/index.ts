/** One member of a quorate cluster (see README.md). */
export { ClusterBackend, type ClusterBackendOptions } from './cluster-backend.js';
export { ClusterStateMachine, type EntryOutcome } from './cluster-state-machine.js';
export { MemberConfigError } from './errors.js';
export { type MemberNode, type MemberOptions, startMember } from './member.js';
export { NODE_USAGE, runNodeCommand } from './node-command.js';
