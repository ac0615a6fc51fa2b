import { runCollective } from './collectiveCall.js';
import type { ProcessGroup } from './processGroup.js';

/**
 * Wait until every member of the group has reached the barrier with this tag: each member tells every
 * other one it has arrived and waits to hear from all of them (one message latency; n² empty frames,
 * which is nothing for the group sizes of one job's dimension).
 */
export function barrier(group: ProcessGroup, tag: string): Promise<void> {
  if (group.size <= 1) return Promise.resolve();
  return runCollective(group, 'barrier', tag, async (call) => {
    for (const r of group.others()) call.send(r, 'arrived');
    await Promise.all(group.others().map((r) => call.receive(r, 'arrived')));
  });
}
