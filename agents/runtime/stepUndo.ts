import type * as tf from '@tensorflow/tfjs-core';
import { disposeMemo, type OptimizerMemo } from '../exec/optimizer.js';
import type { StageContext } from './stageContext.js';

/**
 * The state of a stage before a step's update, kept until the next step begins, so that a step the
 * coordinator discards (an agent was lost half way: some survivors may already have updated) can be
 * undone exactly. Nothing is copied: clones share the parameters' data, and an update replaces
 * tensors rather than writing into them, so the old ones simply stay alive here.
 */
export class StepUndo {
  private saved: { step: number; params: tf.Tensor[]; optimizer: OptimizerMemo } | null = null;

  /** Remember the state at the start of `step` (forgetting the previous one). */
  capture(ctx: StageContext, step: number): void {
    this.forget();
    if (!ctx.gradientSync) return;
    this.saved = { step, params: ctx.module.params.map((p) => p.clone()), optimizer: ctx.gradientSync.memo() };
  }

  /** Back to the start of `step` if this stage got that far; returns whether anything was undone. */
  undo(ctx: StageContext, step: number): boolean {
    if (!this.saved || this.saved.step !== step || !ctx.gradientSync) return false;
    const { params, optimizer } = this.saved;
    ctx.module.params.forEach((p, i) => p.assign(params[i]));
    params.forEach((t) => t.dispose());
    ctx.gradientSync.rewind(optimizer);
    this.saved = null;
    return true;
  }

  forget(): void {
    if (!this.saved) return;
    this.saved.params.forEach((t) => t.dispose());
    disposeMemo(this.saved.optimizer);
    this.saved = null;
  }
}
