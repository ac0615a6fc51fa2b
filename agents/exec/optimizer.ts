import * as tf from '@tensorflow/tfjs-core';
import type { OptimizerConfig } from '../../engine/plan/plan.js';

/**
 * Optimizers applied to a stage's parameters. Shoal implements them itself (instead of tf.train) so
 * that one process and every replica of a distributed job run the very same arithmetic, and so that
 * their state can be checkpointed and re-sharded later.
 */
export interface Optimizer {
  /**
   * Update `params` in place from `grads`; takes ownership of (and disposes) `grads`. `lrScale`
   * multiplies the learning rate for this update (PipeMare's per-stage rescheduling).
   */
  apply(params: tf.Variable[], grads: tf.Tensor[], lrScale?: number): void;
  /** Copy of the state (for checkpoints): updates applied so far, and per-parameter slot values. */
  exportState(): OptimizerState;
  /** Replace the state with one exported before (slot arrays in the parameters' order and shapes). */
  importState(state: OptimizerState, params: tf.Variable[]): void;
  /**
   * The current state as tensor references (clones share their data, nothing is copied), to undo
   * the next update with rewind(): the state tensors an update replaces stay alive in the memo.
   */
  memo(): OptimizerMemo;
  /** Go back to a memo's state; the memo's tensors now belong to the optimizer. */
  rewind(memo: OptimizerMemo): void;
  dispose(): void;
}

/** An optimizer's state at one moment, as tensors (see Optimizer.memo). */
export interface OptimizerMemo {
  step: number;
  slots: Array<tf.Tensor[] | null>;
}

export function disposeMemo(memo: OptimizerMemo): void {
  memo.slots.forEach((tensors) => tensors?.forEach((t) => t.dispose()));
}

const cloneAll = (tensors: tf.Tensor[] | null): tf.Tensor[] | null => tensors?.map((t) => t.clone()) ?? null;

/** An optimizer's state as plain arrays: `slots.m[i]` is parameter i's first moment, and so on. */
export interface OptimizerState {
  step: number;
  slots: Record<string, Float32Array[]>;
}

const copyOut = (tensors: tf.Tensor[] | null): Float32Array[] => (tensors ?? []).map((t) => (t.dataSync() as Float32Array).slice());
const copyIn = (arrays: Float32Array[] | undefined, params: tf.Variable[]): tf.Tensor[] | null =>
  arrays && arrays.length === params.length ? arrays.map((a, i) => tf.tensor(a, params[i].shape, 'float32')) : null;

class Sgd implements Optimizer {
  private velocity: tf.Tensor[] | null = null;
  private steps = 0;
  constructor(private readonly lr: number, private readonly momentum: number) {}

  exportState(): OptimizerState {
    return { step: this.steps, slots: this.velocity ? { velocity: copyOut(this.velocity) } : {} };
  }

  importState(state: OptimizerState, params: tf.Variable[]): void {
    this.velocity?.forEach((t) => t.dispose());
    this.velocity = copyIn(state.slots.velocity, params);
    this.steps = state.step;
  }

  memo(): OptimizerMemo {
    return { step: this.steps, slots: [cloneAll(this.velocity)] };
  }

  rewind(memo: OptimizerMemo): void {
    this.velocity?.forEach((t) => t.dispose());
    this.velocity = memo.slots[0];
    this.steps = memo.step;
  }

  apply(params: tf.Variable[], grads: tf.Tensor[], lrScale = 1): void {
    const lr = this.lr * lrScale;
    this.steps += 1;
    tf.tidy(() => {
      if (this.momentum > 0) {
        const v = this.velocity ?? params.map((p) => tf.zerosLike(p));
        // v ← μ·v + g ;  θ ← θ − η·v
        const next = v.map((vi, i) => tf.keep(tf.add(tf.mul(vi, this.momentum), grads[i])));
        this.velocity?.forEach((t) => t.dispose());
        this.velocity = next;
        params.forEach((p, i) => p.assign(tf.sub(p, tf.mul(next[i], lr))));
      } else {
        params.forEach((p, i) => p.assign(tf.sub(p, tf.mul(grads[i], lr))));
      }
    });
    grads.forEach((g) => g.dispose());
  }

  dispose(): void {
    this.velocity?.forEach((t) => t.dispose());
  }
}

class Adam implements Optimizer {
  private m: tf.Tensor[] | null = null;
  private v: tf.Tensor[] | null = null;
  private t = 0;
  constructor(private readonly config: Extract<OptimizerConfig, { kind: 'adam' }>) {}

  exportState(): OptimizerState {
    return { step: this.t, slots: this.m && this.v ? { m: copyOut(this.m), v: copyOut(this.v) } : {} };
  }

  importState(state: OptimizerState, params: tf.Variable[]): void {
    this.m?.forEach((t) => t.dispose());
    this.v?.forEach((t) => t.dispose());
    this.m = copyIn(state.slots.m, params);
    this.v = copyIn(state.slots.v, params);
    this.t = state.step;
  }

  memo(): OptimizerMemo {
    return { step: this.t, slots: [cloneAll(this.m), cloneAll(this.v)] };
  }

  rewind(memo: OptimizerMemo): void {
    this.m?.forEach((t) => t.dispose());
    this.v?.forEach((t) => t.dispose());
    [this.m, this.v] = memo.slots;
    this.t = memo.step;
  }

  apply(params: tf.Variable[], grads: tf.Tensor[], lrScale = 1): void {
    const { beta1, beta2, epsilon } = this.config;
    const learningRate = this.config.learningRate * lrScale;
    this.t += 1;
    const correction1 = 1 - beta1 ** this.t;
    const correction2 = 1 - beta2 ** this.t;
    tf.tidy(() => {
      const m0 = this.m ?? params.map((p) => tf.zerosLike(p));
      const v0 = this.v ?? params.map((p) => tf.zerosLike(p));
      // m ← β1·m + (1−β1)·g ;  v ← β2·v + (1−β2)·g² ;  θ ← θ − η·(m/(1−β1ᵗ)) / (√(v/(1−β2ᵗ)) + ε)
      const m = m0.map((mi, i) => tf.keep(tf.add(tf.mul(mi, beta1), tf.mul(grads[i], 1 - beta1))));
      const v = v0.map((vi, i) => tf.keep(tf.add(tf.mul(vi, beta2), tf.mul(tf.square(grads[i]), 1 - beta2))));
      params.forEach((p, i) => {
        const step = tf.div(tf.div(m[i], correction1), tf.add(tf.sqrt(tf.div(v[i], correction2)), epsilon));
        p.assign(tf.sub(p, tf.mul(step, learningRate)));
      });
      this.m?.forEach((t) => t.dispose());
      this.v?.forEach((t) => t.dispose());
      this.m = m;
      this.v = v;
    });
    grads.forEach((g) => g.dispose());
  }

  dispose(): void {
    this.m?.forEach((t) => t.dispose());
    this.v?.forEach((t) => t.dispose());
  }
}

export function createOptimizer(config: OptimizerConfig): Optimizer {
  return config.kind === 'sgd' ? new Sgd(config.learningRate, config.momentum) : new Adam(config);
}
