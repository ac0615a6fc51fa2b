import { MNIST_PIXELS } from '../../engine/data/mnistSplit.js';
import type { Dataset, DataSplit } from '../../engine/wire/data/dataset.js';
import { loadMnistInTurns, type DigitSet } from './mnist.js';

/**
 * The bundled digits as a Dataset: the model's one input reads the 784 pixels of a sample, its one
 * output the class index (as a float, like every target row).
 */
export async function mnistDataset(inputName: string, targetName: string): Promise<Dataset> {
  const data = await loadMnistInTurns();
  const split = (set: DigitSet): DataSplit => ({
    size: set.size,
    gather(names, indices) {
      const widths = names.map((name) => {
        if (name === inputName) return MNIST_PIXELS;
        if (name === targetName) return 1;
        throw new Error(`The MNIST digits have an input "${inputName}" and a target "${targetName}", not "${name}".`);
      });
      const stride = widths.reduce((a, b) => a + b, 0);
      const out = new Float32Array(indices.length * stride);
      for (let r = 0; r < indices.length; r++) {
        const src = indices[r];
        let at = r * stride;
        for (const name of names) {
          if (name === inputName) {
            out.set(set.images.subarray(src * MNIST_PIXELS, (src + 1) * MNIST_PIXELS), at);
            at += MNIST_PIXELS;
          } else out[at++] = set.labels[src];
        }
      }
      return out;
    },
  });
  return {
    describe: 'the bundled MNIST digits',
    arrays: [
      { name: inputName, shape: [MNIST_PIXELS], dtype: 'float32' },
      { name: targetName, shape: [], dtype: 'uint8' },
    ],
    train: split(data.train),
    validation: split(data.test),
    close: () => undefined,
  };
}
