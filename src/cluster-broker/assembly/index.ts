/** The broker's assembly: a single node (`startBroker`) and a cluster member (`startMember`), wired from the parts below. */
export { type MemberHandle, type MemberOptions, startMember } from './member.js';
export { type BrokerHandle, type BrokerStats, type StartBrokerOptions, startBroker } from './start-broker.js';
