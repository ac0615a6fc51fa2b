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

/**
 * The state an optimizer keeps per parameter, as named slots (each one tensor per parameter, or null
 * before the first update), and the bookkeeping every optimizer shares: checkpoint export/import, memo
 * and rewind. An update builds new slot tensors and replaces the old ones (never writes into them), so
 * a memo's clones keep the previous state alive. Slot names are what checkpoints store; kinds that
 * share a name share its meaning (adam and adamw's m and v), so switching between them keeps the state.
 */
abstract class SlotOptimizer implements Optimizer {
  private state: Array<tf.Tensor[] | null>;
  protected steps = 0;

  constructor(private readonly slotNames: readonly string[]) {
    this.state = slotNames.map(() => null);
  }

  /** A slot's value before the first update (tfjs starts every slot at zero but Adagrad's accumulator). */
  protected initial(_slot: string, param: tf.Variable): tf.Tensor {
    return tf.zerosLike(param);
  }

  /**
   * One update, inside a tidy: assign every parameter its new value and return the new slot tensors
   * (in slotNames' order, one per parameter). `this.steps` already counts this update.
   */
  protected abstract update(params: tf.Variable[], grads: tf.Tensor[], slots: tf.Tensor[][], lr: number): tf.Tensor[][];

  exportState(): OptimizerState {
    const slots: Record<string, Float32Array[]> = {};
    this.slotNames.forEach((name, k) => {
      if (this.state[k]) slots[name] = copyOut(this.state[k]);
    });
    return { step: this.steps, slots };
  }

  importState(state: OptimizerState, params: tf.Variable[]): void {
    this.disposeState();
    this.state = this.slotNames.map((name) => copyIn(state.slots[name], params));
    this.steps = state.step;
  }

  memo(): OptimizerMemo {
    return { step: this.steps, slots: this.state.map(cloneAll) };
  }

  rewind(memo: OptimizerMemo): void {
    this.disposeState();
    this.state = this.slotNames.map((_, k) => memo.slots[k] ?? null);
    this.steps = memo.step;
  }

  apply(params: tf.Variable[], grads: tf.Tensor[], lrScale = 1): void {
    this.steps += 1;
    tf.tidy(() => {
      const current = this.slotNames.map((name, k) => this.state[k] ?? params.map((p) => this.initial(name, p)));
      const next = this.update(params, grads, current, lrScale);
      next.forEach((tensors) => tensors.forEach((t) => tf.keep(t)));
      this.disposeState();
      this.state = next;
    });
    grads.forEach((g) => g.dispose());
  }

  private disposeState(): void {
    this.state.forEach((tensors) => tensors?.forEach((t) => t.dispose()));
  }

  dispose(): void {
    this.disposeState();
  }
}

/*
 * Every update below is tfjs 4.22's `tf.train.*` applyGradients, op for op and with the same scalar
 * constants (each a float32 scalar), so on one backend Shoal and tfjs produce the same bits. Two
 * harmless rewrites: tfjs adds `−η·x` to θ where Shoal subtracts `η·x` (the same float: negation is
 * exact), and a slot that cannot change the result is not kept (momentum 0's velocity: 0·v + x = x).
 * `η` is the learning rate times `lrScale` (PipeMare's per-stage rescheduling), the product taken in
 * float64 and rounded once, like tfjs's own scalar of the learning rate.
 */

type Config<K extends OptimizerConfig['kind']> = Extract<OptimizerConfig, { kind: K }>;

/** tf.train.sgd (momentum 0) and tf.train.momentum(η, μ, useNesterov). */
class Sgd extends SlotOptimizer {
  constructor(private readonly config: Config<'sgd'>) {
    super(config.momentum > 0 ? ['velocity'] : []);
  }

  protected update(params: tf.Variable[], grads: tf.Tensor[], slots: tf.Tensor[][], lrScale: number): tf.Tensor[][] {
    const lr = this.config.learningRate * lrScale;
    const mu = this.config.momentum;
    if (mu === 0) {
      // θ ← θ − η·g
      params.forEach((p, i) => p.assign(tf.sub(p, tf.mul(grads[i], lr))));
      return [];
    }
    // v ← μ·v + g ;  θ ← θ − η·v, or with Nesterov θ ← θ − η·(g + μ·v)
    const velocity = slots[0].map((v, i) => tf.add(tf.mul(v, mu), grads[i]));
    params.forEach((p, i) => {
      const direction = this.config.nesterov ? tf.add(grads[i], tf.mul(velocity[i], mu)) : velocity[i];
      p.assign(tf.sub(p, tf.mul(direction, lr)));
    });
    return [velocity];
  }
}

/**
 * tfjs's running powers β1ᵗ and β2ᵗ: float32 variables multiplied by β once per update, so the bias
 * corrections 1 − βᵗ are rounded as tfjs rounds them (and agree with the float32 β the moments decay by).
 */
class BetaPowers {
  private t = 0;
  private power = 1;
  constructor(private readonly beta: number) {}

  /** 1 − βᵗ as tfjs's `sub(1, accBeta)` computes it at update t (t ≥ 1). */
  correction(t: number): number {
    if (t < this.t) {
      this.t = 0;
      this.power = 1;
    }
    const beta = Math.fround(this.beta);
    for (; this.t < t; this.t++) this.power = this.t === 0 ? beta : Math.fround(this.power * beta);
    return Math.fround(1 - this.power);
  }
}

/**
 * tf.train.adam, and AdamW: Adam after decoupled weight decay. tfjs has no AdamW (tf.train has no
 * weight decay at all); this one is Keras's and PyTorch's: θ ← θ − η·λ·θ first (Keras's
 * `_apply_weight_decay`, PyTorch's `p.mul_(1 − lr·wd)`), then the Adam step with the gradient alone,
 * every parameter decayed (Keras's default: nothing excluded). The Adam step is tfjs's and PyTorch's,
 * m̂/(√v̂ + ε); Keras's own Adam adds ε to √v before the bias correction (ε·√(1 − β2ᵗ) in this form),
 * a difference only while √v̂ is near ε. With λ = 0, adamw is adam bit for bit.
 */
class Adam extends SlotOptimizer {
  private readonly powers1: BetaPowers;
  private readonly powers2: BetaPowers;
  constructor(private readonly config: Config<'adam'> | Config<'adamw'>) {
    super(['m', 'v']);
    this.powers1 = new BetaPowers(config.beta1);
    this.powers2 = new BetaPowers(config.beta2);
  }

  protected update(params: tf.Variable[], grads: tf.Tensor[], [m0, v0]: tf.Tensor[][], lrScale: number): tf.Tensor[][] {
    const { beta1, beta2, epsilon } = this.config;
    const lr = this.config.learningRate * lrScale;
    const decay = this.config.kind === 'adamw' ? this.config.weightDecay : 0;
    const correction1 = this.powers1.correction(this.steps);
    const correction2 = this.powers2.correction(this.steps);
    // m ← β1·m + (1−β1)·g ;  v ← β2·v + (1−β2)·g² ;  θ ← θ − η·(m/(1−β1ᵗ)) / (√(v/(1−β2ᵗ)) + ε)
    const m = m0.map((mi, i) => tf.add(tf.mul(mi, beta1), tf.mul(grads[i], 1 - beta1)));
    const v = v0.map((vi, i) => tf.add(tf.mul(vi, beta2), tf.mul(tf.square(grads[i]), 1 - beta2)));
    params.forEach((p, i) => {
      // AdamW: θ ← θ − (η·λ)·θ
      const decayed = decay > 0 ? tf.sub(p, tf.mul(p, lr * decay)) : p;
      const step = tf.div(tf.div(m[i], correction1), tf.add(tf.sqrt(tf.div(v[i], correction2)), epsilon));
      p.assign(tf.sub(decayed, tf.mul(step, lr)));
    });
    return [m, v];
  }
}

/**
 * tf.train.rmsprop(η, ρ, μ, ε, centered):
 *   s ← ρ·s + (1−ρ)·g²                        (slot "rms")
 *   centered: ḡ ← ρ·ḡ + (1−ρ)·g, d = s − ḡ² + ε (slot "mg");  else d = s + ε
 *   u ← μ·u + η·g/√d ;  θ ← θ − u              (slot "momentum", kept only for μ > 0)
 * One deliberate difference: centered, tfjs 4.22 takes √(s − (ḡ² + ε)), subtracting ε, which is NaN
 * wherever the variance estimate is below ε (a parameter whose gradient is zero, from the first
 * update); this is TensorFlow's and Keras's √(s − ḡ² + ε). The two agree whenever ε is negligible
 * beside s − ḡ².
 */
class RmsProp extends SlotOptimizer {
  constructor(private readonly config: Config<'rmsprop'>) {
    super(['rms', ...(config.momentum > 0 ? ['momentum'] : []), ...(config.centered ? ['mg'] : [])]);
  }

  protected update(params: tf.Variable[], grads: tf.Tensor[], slots: tf.Tensor[][], lrScale: number): tf.Tensor[][] {
    const { decay, momentum, epsilon, centered } = this.config;
    const lr = this.config.learningRate * lrScale;
    const [rms0] = slots;
    const mom0 = momentum > 0 ? slots[1] : null;
    const mg0 = centered ? slots[slots.length - 1] : null;
    const rms = rms0.map((s, i) => tf.add(tf.mul(s, decay), tf.mul(tf.square(grads[i]), 1 - decay)));
    const mg = mg0?.map((a, i) => tf.add(tf.mul(a, decay), tf.mul(grads[i], 1 - decay))) ?? null;
    const mom = params.map((p, i) => {
      const denominator = mg ? tf.add(tf.sub(rms[i], tf.square(mg[i])), epsilon) : tf.add(rms[i], epsilon);
      const contribution = tf.div(tf.mul(grads[i], lr), tf.sqrt(denominator));
      const u = mom0 ? tf.add(tf.mul(mom0[i], momentum), contribution) : contribution;
      p.assign(tf.sub(p, u));
      return u;
    });
    return [rms, ...(mom0 ? [mom] : []), ...(mg ? [mg] : [])];
  }
}

/**
 * tf.train.adagrad(η, initialAccumulatorValue): a ← a + g² ;  θ ← θ − η·g/√(a + ε). tfjs's ε is the
 * backend's (1e-7 in float32), Keras's the option (default 1e-7).
 */
class Adagrad extends SlotOptimizer {
  constructor(private readonly config: Config<'adagrad'>) {
    super(['accumulator']);
  }

  protected override initial(_slot: string, param: tf.Variable): tf.Tensor {
    return tf.fill(param.shape, this.config.initialAccumulatorValue);
  }

  protected update(params: tf.Variable[], grads: tf.Tensor[], [acc0]: tf.Tensor[][], lrScale: number): tf.Tensor[][] {
    const lr = this.config.learningRate * lrScale;
    const acc = acc0.map((a, i) => tf.add(a, tf.square(grads[i])));
    params.forEach((p, i) => p.assign(tf.sub(p, tf.mul(tf.div(grads[i], tf.sqrt(tf.add(acc[i], this.config.epsilon))), lr))));
    return [acc];
  }
}

export function createOptimizer(config: OptimizerConfig): Optimizer {
  switch (config.kind) {
    case 'sgd':
      return new Sgd(config);
    case 'adam':
    case 'adamw':
      return new Adam(config);
    case 'rmsprop':
      return new RmsProp(config);
    case 'adagrad':
      return new Adagrad(config);
  }
}
