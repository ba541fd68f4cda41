/**
 * The optional trailing flags of replication messages (a blank member's vote claim, a recovering
 * member's answers, the leader's `recovered` news), each with the run id it names, as message
 * fields. Both wire codecs read a flag their own way and build the fields here.
 */

/** A flag read off the wire: present, with or without the round (run id) it names. */
export interface WireFlag {
  round?: number;
}

export function blankFields(flag: WireFlag | undefined): { blank?: true; blankRound?: number } {
  if (flag === undefined) return {};
  return flag.round === undefined ? { blank: true } : { blank: true, blankRound: flag.round };
}

export function recoveringFields(flag: WireFlag | undefined): { recovering?: true; recoveryRound?: number } {
  if (flag === undefined) return {};
  return flag.round === undefined ? { recovering: true } : { recovering: true, recoveryRound: flag.round };
}

export function recoveredFields(flag: WireFlag | undefined): { recovered?: true; recoveryRound?: number } {
  if (flag === undefined) return {};
  return flag.round === undefined ? { recovered: true } : { recovered: true, recoveryRound: flag.round };
}
