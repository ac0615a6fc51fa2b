import * as tf from '@tensorflow/tfjs-core';
import type { WeightConstraint } from '../graph/layersModel.js';
import { sliceAxis, type GradientSum, type ShardedParamSpec } from './shardedParams.js';
import type { TensorGroup } from './tensorGroup.js';

let nextVariableId = 0;

/**
 * The parameters of one shard of a graph stage: an unsplit layer's own variables (the layer reads
 * them itself), a shard's slice of a split weight, or a whole copy that every shard applies once to a
 * summed output. A weight of a layer called several times appears once, its gradients adding up.
 */
export class ShardedParams {
  readonly variables: tf.Variable[] = [];
  readonly specs: ShardedParamSpec[] = [];
  readonly constraints: Array<{ variable: tf.Variable; constraint: WeightConstraint }> = [];
  private readonly seen = new Map<tf.Variable, { k: number; sum: GradientSum; axis?: number }>();

  constructor(private readonly group: TensorGroup) {}

  variable(k: number): tf.Variable {
    return this.variables[k];
  }

  /** The layer's own variable, used on this shard's rows of the batch: its gradient is a partial sum. */
  own(variable: tf.Variable, name: string, constraint: WeightConstraint | null): number {
    return this.add(variable, name, 'batchSplit', undefined, () => {
      if (constraint) this.constraints.push({ variable, constraint });
      return { variable, spec: { name, shape: variable.shape, init: new Float32Array(0), sum: 'batchSplit' } };
    });
  }

  /** This shard's slice of the weight along `axis`. */
  slice(variable: tf.Variable, name: string, axis: number): number {
    const { size, index } = this.group;
    return this.add(variable, name, 'sharded', axis, () => {
      const shape = variable.shape.map((d, i) => (i === axis ? d / size : d));
      const values = sliceAxis(variable.dataSync() as Float32Array, variable.shape, axis, size, index);
      const split = { axis, parts: size, index, fullShape: variable.shape };
      return { variable: tf.variable(tf.tensor(values, shape), true, `${name}#tp${nextVariableId++}`), spec: { name, shape, init: new Float32Array(0), sum: 'sharded', split } };
    });
  }

  /** A whole copy every shard holds and applies to whole tensors: the same gradient on every shard. */
  copy(variable: tf.Variable, name: string): number {
    return this.add(variable, name, 'replicated', undefined, () => ({
      variable: tf.variable(variable.clone(), true, `${name}#tp${nextVariableId++}`),
      spec: { name, shape: variable.shape, init: new Float32Array(0), sum: 'replicated' },
    }));
  }

  private add(source: tf.Variable, name: string, sum: GradientSum, axis: number | undefined, make: () => { variable: tf.Variable; spec: ShardedParamSpec }): number {
    const known = this.seen.get(source);
    if (known) {
      if (known.sum !== sum || known.axis !== axis) throw new Error(`Weight "${name}" belongs to a layer called more than once, split differently in its calls; shard every call alike.`);
      return known.k;
    }
    const { variable, spec } = make();
    const k = this.variables.push(variable) - 1;
    this.specs.push(spec);
    this.seen.set(source, { k, sum, axis });
    return k;
  }

  /** Free the variables this table made (the layers' own stay the model's). */
  dispose(): void {
    this.variables.forEach((v, k) => this.specs[k].sum !== 'batchSplit' && v.dispose());
  }
}
