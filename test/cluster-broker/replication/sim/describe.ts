import type { Message } from '../../../../src/cluster-broker/replication/raft/types.js';

/** One line per message, for the simulation's trace. */
export function describe(m: Message): string {
  switch (m.type) {
    case 'append':
      return `append ${m.from}->${m.to} t${m.term} prev=${m.prevIndex}@${m.prevTerm} n=${m.entries.length}${
        m.entries.length ? `[${m.entries[0]!.index}..${m.entries[m.entries.length - 1]!.index}]` : ''
      } c=${m.commit}`;
    case 'append-response':
      return `append-resp ${m.from}->${m.to} t${m.term} ${m.success ? `ok match=${m.matchIndex}` : `reject prev=${m.rejectedPrev} hint=${m.hintIndex}`}${m.recovering ? ' recovering' : ''}`;
    case 'vote':
      return `${m.pre ? 'pre-vote' : 'vote'} ${m.from}->${m.to} t${m.term} last=${m.lastIndex}@${m.lastTerm}${m.blank ? ' blank' : ''}`;
    case 'vote-response':
      return `${m.pre ? 'pre-vote' : 'vote'}-resp ${m.from}->${m.to} t${m.term} ${m.granted ? 'granted' : 'denied'}${m.blank ? ' blank' : ''}`;
    case 'snapshot':
      return `snapshot ${m.from}->${m.to} t${m.term} idx=${m.snapshot.index}@${m.snapshot.term}`;
    case 'heartbeat':
      return `heartbeat ${m.from}->${m.to} t${m.term} c=${m.commit}`;
    case 'heartbeat-response':
      return `heartbeat-resp ${m.from}->${m.to} t${m.term}`;
  }
}
