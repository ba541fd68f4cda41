/** The broker's assembly: a single node (`startBroker`) and a cluster member (`startMember`), wired from the parts below. */

export type { BrokerStats } from '../api.js';
export { type MemberNode, type MemberOptions, startMember } from './member.js';
export { type BrokerNode, type StartBrokerOptions, startBroker } from './start-broker.js';
