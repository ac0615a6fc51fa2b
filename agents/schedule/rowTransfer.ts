import * as tf from '@tensorflow/tfjs-core';
import { bytesToFloats, floatsToBytes } from '../../engine/wire/frame.js';
import type { PeerMesh } from '../comm/peerMesh.js';
import type { RowPiece } from './stageBoundary.js';

/**
 * Receive this agent's rows of a tensor from the agents of a neighbouring stage, piece by piece (one
 * piece when neither stage is sharded), and stack them. `first` is the first row this agent holds.
 */
export async function receiveRows(mesh: PeerMesh, pieces: RowPiece[], tag: string, rowShape: number[]): Promise<tf.Tensor> {
  const parts = await Promise.all(
    pieces.map(async (piece) => {
      const values = bytesToFloats((await mesh.link(piece.rank).receive(tag)).payload);
      const expected = (piece.to - piece.from) * rowShape.reduce((a, b) => a * b, 1);
      if (values.length !== expected) {
        throw new Error(`Received ${values.length} values for "${tag}" from rank ${piece.rank}, expected ${expected} (rows ${piece.from}–${piece.to} of shape [${rowShape}]); do both agents run the same plan?`);
      }
      return values;
    }),
  );
  if (parts.length === 1) return tf.tensor(parts[0], [pieces[0].to - pieces[0].from, ...rowShape], 'float32');
  const rows = pieces.reduce((n, p) => n + p.to - p.from, 0);
  const out = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return tf.tensor(out, [rows, ...rowShape], 'float32');
}

/** Send the rows of `t` (whose first row is row `first` of the micro-batch) to the agents that take them. */
export function sendRows(mesh: PeerMesh, pieces: RowPiece[], tag: string, t: tf.Tensor, first: number): void {
  const values = t.dataSync() as Float32Array;
  const rowSize = t.size / Math.max(t.shape[0], 1);
  for (const piece of pieces) {
    const part = values.subarray((piece.from - first) * rowSize, (piece.to - first) * rowSize);
    mesh.link(piece.rank).send({ type: 'tensor', tag }, floatsToBytes(part));
  }
}
