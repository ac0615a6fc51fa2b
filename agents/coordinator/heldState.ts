import type { Plan } from '../../engine/plan/plan.js';
import type { Message } from '../../engine/wire/frame.js';
import type { StateSource } from '../../engine/protocol/agentRequests.js';
import type { Member } from './membership.js';

/**
 * A job's state while a resize hands it over: not in the coordinator's memory but held by one agent
 * per stage (the stage's first replica, first shard), which serves it to the next generation's
 * members peer to peer (agents/runtime/stateShare.ts). The coordinator keeps only who holds which
 * tensor names.
 */
export interface HeldState {
  holders: Array<{ member: Member; names: string[]; floats: number }>;
  optimizerStep: number;
}

export const isHeldState = (state: unknown): state is HeldState => typeof state === 'object' && state !== null && 'holders' in state;

/** The holders from a `snapshot` round with `keep: true`; `members[rank]` sent the reply of `rank`. */
export function heldStateFrom(replies: Message[], members: readonly Member[]): HeldState {
  const holders = replies
    .filter((m) => m.header.held === true && Array.isArray(m.header.tensors))
    .map((m) => {
      const tensors = m.header.tensors as Array<{ name: string; shape: number[] }>;
      return {
        member: members[Number(m.header.rank)],
        names: [...new Set(tensors.map((t) => t.name))],
        floats: tensors.reduce((n, t) => n + t.shape.reduce((a, b) => a * b, 1), 0),
      };
    });
  return { holders, optimizerStep: Number(replies.find((m) => m.header.held === true)?.header.optimizerStep ?? 0) };
}

/** The layer a tensor belongs to: `dense1/kernel` → `dense1`. */
const layerOf = (name: string) => name.slice(0, name.lastIndexOf('/'));

/**
 * Where a member of `stage` fetches its tensors from: every holder that has some of the stage's
 * layers (one, unless the stage cuts moved). Throws when such a holder was lost meanwhile.
 */
export function sourcesForStage(held: HeldState, plan: Plan, stage: number): StateSource[] {
  const layers = new Set(plan.stages[stage].layers);
  const sources = held.holders
    .map((h) => ({ member: h.member, names: h.names.filter((n) => layers.has(layerOf(n))) }))
    .filter((h) => h.names.length > 0);
  const lost = sources.find((s) => s.member.lost);
  if (lost) throw new Error(`the agent holding the state of stage ${stage} (${lost.member.host}, pid ${lost.member.pid}) was lost: ${lost.member.lost}`);
  return sources.map((s) => ({ host: s.member.peerHost, port: s.member.peerPort, names: s.names }));
}

/** Holders that were lost before they could hand their state over. */
export const lostHolders = (held: HeldState) => held.holders.filter((h) => h.member.lost);
