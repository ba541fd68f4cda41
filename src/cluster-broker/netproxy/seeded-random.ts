/**
 * The seedable PRNG for fault injection (a lossy-link schedule replays from its seed): the same
 * mulberry32 generator the failover policy uses.
 */
export { type Random, seededRandom } from '../../failover/random.js';
