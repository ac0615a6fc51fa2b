import * as tf from '@tensorflow/tfjs-core';
import type * as tfl from '@tensorflow/tfjs-layers/dist/index.js';
import type { ModelGraph } from '../../../engine/model/graph.js';
import type { StageCuts } from '../../../engine/model/stageCuts.js';
import type { OutputLoss } from '../../../engine/model/trainingSpec.js';
import type { Plan } from '../../../engine/plan/plan.js';
import { targetShape } from '../../../engine/data/modelArrays.js';
import { evalSums, tidily, type EvalSums } from '../evalSums.js';
import { GradientAccumulator } from '../gradientAccumulator.js';
import type { PassRows } from '../graph/dropoutMask.js';
import { packColumns, unpackColumns } from '../graph/packing.js';
import { lossSum } from '../losses.js';
import type { EvalMeasures, FinalGradient, StageExecutor } from '../stageExecutor.js';
import { compileGraphStage, type GraphProgram } from './compileGraphStage.js';
import type { PassContext } from './shardedLayers.js';
import { FinalHandOver } from './finalHandOver.js';
import { shardedCorrect, shardedCrossEntropy } from './shardedCrossEntropy.js';
import type { ShardedParamSpec } from './shardedParams.js';
import type { TensorGroup } from './tensorGroup.js';

export interface ShardedGraphStageOptions {
  graph: ModelGraph;
  model: tfl.LayersModel;
  /** The stage's layer ids, a contiguous run of the graph's order. */
  layers: string[];
  cuts: StageCuts;
  stage: number;
  plan: Plan;
  group: TensorGroup;
  /** The loss of each model output (used on the last stage only). */
  losses: OutputLoss[];
}

/** A pass's tensors by key, and how it ran (for the backward pass). */
interface Pass {
  env: Map<string, tf.Tensor>;
  context: PassContext;
}

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * One tensor-parallel shard of a pipeline stage of any Keras graph (compileGraphStage's program):
 * tfjs-layers' layers on this shard's rows, Megatron's split layers on this shard's slices, and the
 * collectives between them. Edge tensors are this shard's rows of the packed cut; `rows` is the
 * whole micro-batch. The backward pass walks the program in reverse: tfjs differentiates each local
 * step, the collectives run their adjoints. A training forward pass keeps every step's output unless
 * the plan recomputes: then the backward pass runs the forward pass again, collectives included.
 */
export class ShardedGraphStage implements StageExecutor {
  readonly params: tf.Variable[];
  readonly paramSpecs: ShardedParamSpec[];
  readonly inputShape: number[];
  readonly outputShape: number[];
  private readonly program: GraphProgram;
  private readonly incoming: string[];
  private readonly shapes: Map<string, number[]>;
  private readonly isFirst: boolean;
  private readonly isLast: boolean;
  private readonly gradients: GradientAccumulator;
  /** Per step: the parameters whose every use lies at or after it (final once its backward is done). */
  private readonly finalAfter: number[][];
  private readonly kept = new Map<tf.Tensor, Pass>();
  private readonly passes = new Map<tf.Tensor, PassRows | null>();
  private pass: PassRows | null = null;
  private handing: Promise<void> = Promise.resolve();
  private readonly keepActivations: boolean;

  constructor(private readonly options: ShardedGraphStageOptions) {
    const { graph, cuts, stage, plan } = options;
    this.program = compileGraphStage(options);
    this.params = this.program.params.variables;
    this.paramSpecs = this.program.params.specs;
    this.gradients = new GradientAccumulator(this.params);
    this.shapes = new Map(graph.layers.map((l) => [l.id, l.outputShape]));
    this.incoming = cuts.incoming[stage];
    this.isFirst = stage === 0;
    this.isLast = stage === cuts.outgoing.length - 1;
    const width = (ids: string[]) => ids.reduce((n, id) => n + this.shapes.get(id)!.reduce((a, b) => a * b, 1), 0);
    this.inputShape = [width(this.incoming)];
    this.outputShape = [width(cuts.outgoing[stage])];
    this.keepActivations = !plan.recompute;
    const firstUse = new Map<number, number>();
    this.program.steps.forEach((step, i) => step.kind === 'local' && step.params.forEach((k) => firstUse.has(k) || firstUse.set(k, i)));
    this.finalAfter = this.program.steps.map(() => []);
    for (const [k, i] of firstUse) this.finalAfter[i].push(k);
  }

  /** The compiled program, e.g. "gather rows of x → enter dense_1 → dense_1 (column-parallel) → …". */
  describe(): string {
    return this.program.steps.map((s) => s.name).join(' → ');
  }

  setPass(pass: PassRows | null): void {
    this.pass = pass;
  }

  applyConstraints(): void {
    for (const { variable, constraint } of this.program.params.constraints) tf.tidy(() => variable.assign(constraint.apply(variable)));
  }

  private context(training: boolean, pass: PassRows | null, rows: number): PassContext {
    if (!pass) return { training, pass: null, ownPass: null };
    const [a, b] = this.options.group.rowRange(rows);
    return { training, pass, ownPass: { ...pass, samples: Array.prototype.slice.call(pass.samples, a, b) as number[] } };
  }

  /** Run the program on this shard's rows `x`; every step's output by key (the caller disposes them). */
  private async run(x: tf.Tensor, rows: number, context: PassContext): Promise<Map<string, tf.Tensor>> {
    const env = new Map<string, tf.Tensor>();
    unpackColumns(x, this.incoming.map((id) => this.shapes.get(id)!)).forEach((t, i) => env.set(this.incoming[i], t));
    try {
      for (const step of this.program.steps) {
        if (step.kind === 'local') {
          const inputs = step.inputs.map((key) => env.get(key)!);
          env.set(step.output, tf.tidy(() => step.run(inputs, context)));
        } else {
          env.set(step.output, await step.forward(env.get(step.input)!, rows));
        }
      }
    } catch (err) {
      env.forEach((t) => t.dispose());
      throw err;
    }
    return env;
  }

  private release(env: Map<string, tf.Tensor>): void {
    env.forEach((t) => t.dispose());
  }

  private packed(env: Map<string, tf.Tensor>): tf.Tensor {
    return packColumns(this.program.outgoing.map((o) => env.get(o.key)!));
  }

  async forward(x: tf.Tensor, rows: number): Promise<tf.Tensor> {
    const context = this.context(true, this.pass, rows);
    this.passes.set(x, this.pass);
    const env = await this.run(x, rows, context);
    const y = this.packed(env);
    if (this.keepActivations) this.kept.set(x, { env, context });
    else this.release(env);
    return y;
  }

  async infer(x: tf.Tensor, rows: number): Promise<tf.Tensor> {
    const env = await this.run(x, rows, this.context(false, null, rows));
    try {
      // A class-sharded output is gathered here only: prediction wants every class.
      const parts: tf.Tensor[] = [];
      for (const o of this.program.outgoing) {
        const t = env.get(o.key)!;
        if (o.layout === 'S0') parts.push(t);
        else {
          const whole = await this.options.group.allGatherFeatures(t);
          parts.push(this.options.group.ownRows(whole));
          whole.dispose();
        }
      }
      const y = packColumns(parts);
      parts.forEach((p) => ![...env.values()].includes(p) && p.dispose());
      return y;
    } finally {
      this.release(env);
    }
  }

  async backward(x: tf.Tensor, dy: tf.Tensor, rows: number, onFinal?: FinalGradient): Promise<tf.Tensor | null> {
    let kept = this.kept.get(x);
    this.kept.delete(x);
    const pass = this.passes.get(x) ?? null;
    this.passes.delete(x);
    if (!kept) {
      const context = this.context(true, pass, rows);
      kept = { env: await this.run(x, rows, context), context };
    }
    const grads = new Map<string, tf.Tensor>();
    const pieces = unpackColumns(dy, this.program.outgoing.map((o) => this.shapes.get(o.id)!));
    this.program.outgoing.forEach((o, i) => addTo(grads, o.key, pieces[i]));
    return this.backwardFrom(kept, grads, rows, onFinal);
  }

  /**
   * The program in reverse from the gradients of its outputs; returns the gradient of the packed
   * incoming cut (this shard's rows), or null on the first stage.
   */
  private async backwardFrom(pass: Pass, grads: Map<string, tf.Tensor>, rows: number, onFinal?: FinalGradient): Promise<tf.Tensor | null> {
    const { env, context } = pass;
    const { steps, constant } = this.program;
    const handOver = onFinal ? new FinalHandOver(this.options.group, this.paramSpecs, onFinal) : null;
    try {
      for (let i = steps.length - 1; i >= 0; i--) {
        const step = steps[i];
        const g = grads.get(step.output);
        grads.delete(step.output);
        if (g && step.kind === 'local') {
          const wanted = [...new Set(step.inputs)].filter((key) => !constant.has(key));
          const inputs = step.inputs.map((key) => env.get(key)!);
          const xs = [...wanted.map((key) => env.get(key)!), ...step.params.map((k) => this.params[k])];
          const result = xs.length === 0 ? [] : tf.tidy(() => tf.engine().gradients(() => step.run(inputs, context), xs, g, true).grads);
          wanted.forEach((key, j) => result[j] && addTo(grads, key, result[j]));
          step.params.forEach((k, j) => this.gradients.add(k, result[wanted.length + j] ?? tf.zerosLike(this.params[k])));
        } else if (g && step.kind === 'comm') {
          const dx = await step.backward(g, rows);
          if (constant.has(step.input)) dx.dispose();
          else addTo(grads, step.input, dx);
        }
        g?.dispose();
        // Parameters whose every use is now differentiated: their gradients are final for the step.
        if (handOver && this.finalAfter[i].length > 0) {
          handOver.add(this.finalAfter[i].map((k) => this.gradients.take(k)), this.finalAfter[i]);
          await yieldToEventLoop();
        }
      }
      // Every hand-over is queued by now: handedOver() waits for the last of them.
      if (handOver) this.handing = handOver.done();
      if (this.isFirst) return null;
      return tf.tidy(() => packColumns(this.incoming.map((id) => grads.get(id) ?? tf.zerosLike(env.get(id)!))));
    } finally {
      grads.forEach((t) => t.dispose());
      this.release(env);
    }
  }

  async lossBackward(x: tf.Tensor, targets: Float32Array, rows: number, divisor: number, onFinal?: FinalGradient): Promise<{ loss: number; dx: tf.Tensor | null }> {
    const context = this.context(true, this.pass, rows);
    const env = await this.run(x, rows, context);
    const grads = new Map<string, tf.Tensor>();
    let loss = 0;
    try {
      const wanted = this.targetTensors(targets, rows);
      for (const [i, spec] of this.options.losses.entries()) {
        const out = this.program.outgoing.find((o) => o.id === spec.output)!;
        const output = env.get(out.key)!;
        if (out.layout === 'S1') {
          const { lossSum: sum, dLogits } = await this.classSharded(spec, output, wanted[i], divisor);
          loss += sum;
          addTo(grads, out.key, dLogits);
          continue;
        }
        const mine = this.options.group.ownRows(wanted[i]);
        const { value, grad } = tf.tidy(() => tf.valueAndGrad((z: tf.Tensor) => lossSum(spec, z, mine, divisor))(output));
        loss += (await value.data())[0];
        value.dispose();
        mine.dispose();
        addTo(grads, out.key, grad);
      }
      wanted.forEach((t) => t.dispose());
    } catch (err) {
      grads.forEach((t) => t.dispose());
      this.release(env);
      throw err;
    }
    return { loss, dx: await this.backwardFrom({ env, context }, grads, rows, onFinal) };
  }

  /**
   * The sharded softmax cross-entropy of class-sharded logits (any rank: each position a row), times
   * the loss weight; the loss is reported by shard 0 only, as every shard computed it.
   */
  private async classSharded(spec: OutputLoss, logits: tf.Tensor, target: tf.Tensor, divisor: number): Promise<{ lossSum: number; dLogits: tf.Tensor }> {
    const flat = flatLogits(logits);
    try {
      const labels = this.classLabels(spec, target, flat.shape[0]);
      const positions = flat.shape[0] / Math.max(logits.shape[0], 1);
      const { lossSum: sum, dLogits } = await shardedCrossEntropy(this.options.group, flat, labels, divisor * positions);
      const shaped = tf.tidy(() => tf.reshape(spec.weight === 1 ? dLogits : tf.mul(dLogits, spec.weight), logits.shape));
      dLogits.dispose();
      return { lossSum: this.options.group.index === 0 ? sum * spec.weight : 0, dLogits: shaped };
    } finally {
      flat.dispose();
    }
  }

  /** Class indices per position: sparse targets as given, one-hot rows by their one. */
  private classLabels(spec: OutputLoss, target: tf.Tensor, positions: number): Int32Array {
    const values = target.dataSync() as Float32Array;
    if (values.length === positions) return Int32Array.from(values, Math.floor);
    const classes = values.length / positions;
    const labels = new Int32Array(positions);
    for (let p = 0; p < positions; p++) {
      const row = values.subarray(p * classes, (p + 1) * classes);
      const hot = row.indexOf(1);
      if (hot < 0 || row.some((v, c) => v !== (c === hot ? 1 : 0))) {
        throw new Error(`Output "${spec.output}" is class-sharded, which needs one-hot (or class index) targets; position ${p} of a batch is not one-hot.`);
      }
      labels[p] = hot;
    }
    return labels;
  }

  /** The packed targets of the outputs (every row), as tensors shaped like each loss expects. */
  private targetTensors(targets: Float32Array, rows: number): tf.Tensor[] {
    const shapes = this.options.losses.map((loss) => targetShape(loss, this.shapes.get(loss.output)!));
    return tf.tidy(() => unpackColumns(tf.tensor(targets, [rows, targets.length / Math.max(rows, 1)]), shapes));
  }

  async evaluate(x: tf.Tensor, targets: Float32Array, rows: number, measure?: EvalMeasures): Promise<EvalSums> {
    const env = await this.run(x, rows, this.context(false, null, rows));
    const wanted = this.targetTensors(targets, rows);
    try {
      const outputs = this.options.losses.map((spec) => this.program.outgoing.find((o) => o.id === spec.output)!);
      const metrics = measure?.metrics ?? [];
      if (outputs.every((o) => o.layout === 'S0')) {
        return tidily(() => evalSums(this.options.losses, metrics, outputs.map((o) => env.get(o.key)!), wanted.map((t) => this.options.group.ownRows(t))));
      }
      // One class-sharded output (compileGraphStage allows no other beside it).
      const spec = this.options.losses[0];
      const logits = env.get(outputs[0].key)!;
      const { lossSum: sum, dLogits } = await this.classSharded({ ...spec, weight: 1 }, logits, wanted[0], 1);
      dLogits.dispose();
      const flat = flatLogits(logits);
      const hits = await shardedCorrect(this.options.group, flat, this.classLabels(spec, wanted[0], flat.shape[0])).finally(() => flat.dispose());
      // Every shard computed the same sums: shard 0 counts them.
      const mine = this.options.group.index === 0;
      const positions = mine ? flat.shape[0] : 0;
      const sums: EvalSums = { correct: mine && spec.metric ? hits : 0, total: spec.metric ? positions : 0, lossSum: mine ? sum * spec.weight : 0 };
      if (metrics.length) {
        sums.metrics = {};
        for (const m of metrics) {
          if (m.output !== spec.output) continue;
          if (m.kind === spec.loss) sums.metrics[m.name] = { sum: mine ? sum : 0, count: mine ? rows : 0 };
          else if (m.kind === 'sparseCategoricalAccuracy' || m.kind === 'categoricalAccuracy') sums.metrics[m.name] = { sum: mine ? hits : 0, count: positions };
          else throw new Error(`Metric "${m.name}" (${m.kind}) of the class-sharded output "${spec.output}" is not computed on split classes; drop it or keep the output replicated.`);
        }
      }
      return sums;
    } finally {
      wanted.forEach((t) => t.dispose());
      this.release(env);
    }
  }

  handedOver(): Promise<void> {
    const handing = this.handing;
    this.handing = Promise.resolve();
    return handing;
  }

  takeGradients(): tf.Tensor[] {
    return this.gradients.takeAll();
  }

  keptTensors(): tf.Tensor[] {
    return [...this.kept.entries()].flatMap(([x, { env }]) => [...env.values()].filter((t) => t !== x));
  }

  dispose(): void {
    this.gradients.dispose();
    for (const { env } of this.kept.values()) this.release(env);
    this.kept.clear();
    this.program.params.dispose();
  }
}

/** Logits of any rank as rows of classes: one row per position. */
function flatLogits(logits: tf.Tensor): tf.Tensor {
  return tf.reshape(logits, [-1, logits.shape[logits.shape.length - 1]]);
}

/** Add `t` (ownership passes) to the gradient of `key`. */
function addTo(grads: Map<string, tf.Tensor>, key: string, t: tf.Tensor): void {
  const previous = grads.get(key);
  if (!previous) {
    grads.set(key, t);
    return;
  }
  grads.set(key, tf.add(previous, t));
  previous.dispose();
  t.dispose();
}
