import type { Connection } from '../../engine/wire/connection.js';
import { connectAuthenticated } from '../../engine/wire/handshake.js';
import { bytesToFloats, floatsToBytes } from '../../engine/wire/frame.js';
import type { CheckpointTensor } from '../../engine/wire/checkpointFile.js';
import type { StageSnapshot } from './stageState.js';
import type { StateSource } from '../../engine/protocol/agentRequests.js';
import { StateReplySchema, type StateReply } from '../../engine/protocol/controlWire.js';
import type { PeerHello } from '../../engine/protocol/handshake.js';
import { parseHeader } from '../../engine/protocol/wireHeader.js';

const reply = (conn: Connection, answer: StateReply, payload?: Uint8Array) => conn.send(answer, payload);

/**
 * Peer-to-peer hand-over of a stage's state when a job is resized (VirtualFlow's joining workers get
 * their state from the others, not from a checkpoint or a central server): the agent holding a
 * stage's snapshot keeps it in memory and serves the tensors each member of the new generation asks
 * for, on an authenticated connection to its peer listener. The coordinator only says who fetches
 * what from whom; the bytes go from agent to agent.
 */

/** Answer a fetch from the held snapshot: the named tensors (params and their optimizer slots), packed. */
export function serveState(conn: Connection, held: StageSnapshot | null, names: string[]): void {
  if (!held) {
    reply(conn, { type: 'stateError', message: 'this agent holds no state to hand over (it was released or not asked to keep it)' });
    return;
  }
  const wanted = new Set(names);
  const sizes = held.tensors.map((t) => t.shape.reduce((a, b) => a * b, 1));
  const offsets = sizes.map((_, i) => sizes.slice(0, i).reduce((a, b) => a + b, 0));
  const picked = held.tensors.map((t, i) => ({ t, i })).filter(({ t }) => wanted.has(t.name));
  const values = new Float32Array(picked.reduce((n, { i }) => n + sizes[i], 0));
  let at = 0;
  const tensors: CheckpointTensor[] = picked.map(({ t, i }) => {
    values.set(held.values.subarray(offsets[i], offsets[i] + sizes[i]), at);
    const placed = { ...t, offset: at, length: sizes[i] };
    at += sizes[i];
    return placed;
  });
  reply(conn, { type: 'stateData', tensors, optimizerStep: held.optimizerStep }, floatsToBytes(values));
}

/**
 * Fetch the tensors this agent needs from every source, in parallel, and put them in one body as a
 * checkpoint would hold them (restoreStage takes that). Errors name the source that failed.
 */
export async function fetchState(secret: string, sources: StateSource[]): Promise<{ tensors: CheckpointTensor[]; body: Float32Array; bytes: number }> {
  const parts = await Promise.all(
    sources.map(async (source) => {
      const where = `${source.host}:${source.port}`;
      const conn = await connectAuthenticated(source.host, source.port, secret, { purpose: 'state', names: source.names } satisfies PeerHello);
      try {
        const reply = await new Promise<{ tensors: CheckpointTensor[]; values: Float32Array }>((resolve, reject) => {
          conn.onMessage = (m) => {
            try {
              const answer = parseHeader(StateReplySchema, m.header, `the state holder at ${where}`);
              if (answer.type === 'stateData') resolve({ tensors: answer.tensors, values: bytesToFloats(m.payload) });
              else reject(new Error(`the state holder at ${where} refused: ${answer.message}`));
            } catch (err) {
              reject(err as Error);
            }
          };
          conn.onClose = (err) => reject(new Error(`the state holder at ${where} closed the connection: ${err.message}`));
        });
        const missing = source.names.filter((n) => !reply.tensors.some((t) => t.name === n));
        if (missing.length) throw new Error(`the state holder at ${where} has no ${missing.join(', ')}`);
        return reply;
      } finally {
        conn.close();
      }
    }),
  );
  const length = parts.reduce((n, p) => n + p.values.length, 0);
  const body = new Float32Array(length);
  const tensors: CheckpointTensor[] = [];
  let at = 0;
  for (const p of parts) {
    body.set(p.values, at);
    for (const t of p.tensors) tensors.push({ ...t, offset: t.offset + at });
    at += p.values.length;
  }
  return { tensors, body, bytes: length * 4 };
}
