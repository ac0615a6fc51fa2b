// Run with tsx (the Playwright runner cannot load tfjs's extensionless ESM): writes a user's model and
// data for test/e2e/userModel.spec.ts under the folder given — saved/ (model.json + weights.bin, a
// ResNet-style block), data/ (x.npy, y.npy: 64 samples) and bad/ (an x.npy of the wrong shape).
import { join } from 'node:path';
import { writeNpy } from '../../engine/wire/data/npy.js';
import { resnetBlock, saveLayersModel, tf, writeNpyData } from '../support/userModels.js';

const root = process.argv[2];
if (!root) throw new Error('usage: tsx test/e2e/userModelFiles.ts OUT_DIR');
await tf.setBackend('cpu');
await saveLayersModel(resnetBlock(), join(root, 'saved'));
writeNpyData(join(root, 'data'), { x: { shape: [8, 8, 2], kind: 'float' }, y: { shape: [], kind: { classes: 3 } } }, 64);
writeNpyData(join(root, 'bad'), { y: { shape: [], kind: { classes: 3 } } }, 64);
writeNpy(join(root, 'bad', 'x.npy'), new Float32Array(64 * 4), [64, 4]);
