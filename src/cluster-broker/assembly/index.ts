/** The broker's assembly: a single node (`startBroker`) and a cluster member (`startMember`), wired from the parts below. */

export type { BrokerStats } from '../api.js';
export { startMember } from './member.js';
export type { MemberNode, MemberOptions } from './member-options.js';
export { type BrokerNode, type StartBrokerOptions, startBroker } from './start-broker.js';
