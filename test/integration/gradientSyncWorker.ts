/**
 * One rank of test/integration/gradientSync.test.ts, a real process: one data-parallel replica of a
 * stage. Prints `{"port"}`, reads the peers as one JSON line on stdin, trains the shared case
 * (test/support/gradientCase.ts) with GradientSync under the scenario given as JSON in argv, gathers
 * the optimizer state, prints one JSON result line (parameters, state, timings) and exits.
 */
import '@tensorflow/tfjs-backend-cpu';
import * as tf from '@tensorflow/tfjs-core';
import { createInterface } from 'node:readline';
import { PeerMesh, type PeerAddress } from '../../agents/comm/peerMesh.js';
import { ProcessGroup } from '../../agents/comm/processGroup.js';
import { GradientSync } from '../../agents/exec/gradientSync.js';
import type { OptimizerConfig } from '../../engine/plan/plan.js';
import { initialValues, SHAPES, train, variables } from '../support/gradientCase.js';

interface Scenario {
  zero: number;
  optimizer: OptimizerConfig;
  bucketBytes: number;
  clipNorm?: number;
  steps: number;
}

const [rank, procs] = [Number(process.argv[2]), Number(process.argv[3])];
const scenario = JSON.parse(process.argv[4]) as Scenario;
const emit = (result: Record<string, unknown>) => console.log(JSON.stringify({ rank, ...result }));

async function main(): Promise<void> {
  await tf.setBackend('cpu');
  const mesh = new PeerMesh('integration-secret', () => {});
  console.log(JSON.stringify({ port: await mesh.listen('127.0.0.1') }));
  const line = await new Promise<string>((r) => createInterface({ input: process.stdin }).once('line', r));
  await mesh.connect(rank, (JSON.parse(line) as PeerAddress[]).filter((p) => p.rank !== rank));
  const group = new ProcessGroup(rank, Array.from({ length: procs }, (_, r) => r), mesh.links, { timeoutMs: 20_000, name: 'data-parallel group' });
  const params = variables(initialValues(), SHAPES);
  const clip = scenario.clipNorm === undefined ? undefined : { norm: scenario.clipNorm, group };
  const sync = new GradientSync({ group, params, zero: scenario.zero, optimizer: scenario.optimizer, bucketBytes: scenario.bucketBytes, clip });
  const member = { sync, params, indices: SHAPES.map((_, i) => i), replica: rank };
  const timings = await train([member], 0, scenario.steps);
  const state = await sync.gatherState();
  const slots = Object.fromEntries(Object.entries(state.slots).map(([name, arrays]) => [name, arrays.map((a) => Array.from(a))]));
  emit({ params: params.map((p) => Array.from(p.dataSync())), state: { step: state.step, slots }, timings });
  mesh.close();
  process.exit(0);
}

main().catch((err: Error) => {
  emit({ error: err.message });
  process.exit(1);
});
