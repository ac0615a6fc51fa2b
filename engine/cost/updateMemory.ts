import type { OptimizerConfig } from '../plan/plan.js';

/**
 * Tensors of one parameter's size that an update creates, counted op by op in agents/exec/optimizer.ts
 * (each of its ops makes a new tensor, none is written in place). They are all alive at once: the
 * update runs every parameter inside one tf.tidy, which frees them only when it ends, so the update
 * needs this many times the bytes of the parameters it updates on top of the model state. The new
 * slots and parameters are among them.
 */
export function updateTemporaries(config: OptimizerConfig): number {
  switch (config.kind) {
    case 'sgd':
      // θ − η·g: mul, sub. With momentum v = μ·v + g (mul, add) first; Nesterov's g + μ·v adds two more.
      return config.momentum > 0 ? 4 + (config.nesterov ? 2 : 0) : 2;
    case 'adam':
    case 'adamw':
      // m: mul, mul, add; v: mul, square, mul, add; the step: div, div, sqrt, add, div, mul, sub.
      // AdamW's decay θ − (η·λ)·θ: mul, sub.
      return 14 + (config.kind === 'adamw' && config.weightDecay > 0 ? 2 : 0);
    case 'rmsprop':
      // s: mul, square, mul, add; the denominator: add (centered: ḡ mul, mul, add; square, sub, add);
      // η·g/√d: mul, sqrt, div; momentum u: mul, add; θ − u: sub.
      return 4 + (config.centered ? 6 : 1) + 3 + (config.momentum > 0 ? 2 : 0) + 1;
    case 'adagrad':
      // a + g²: square, add; θ − η·g/√(a + ε): add, sqrt, div, mul, sub.
      return 7;
  }
}
