// Run with tsx (the Playwright runner cannot load tfjs's extensionless ESM): writes the models and data
// for test/e2e/dataSection.spec.ts under the folder given — table/ and image/ (model.json + weights.bin),
// flowers.csv, bad.csv and images/<class>/*.png (see test/support/datasetFiles.ts).
import { join } from 'node:path';
import { saveImageModel, saveTableModel, writeBadCsv, writeFlowersCsv, writeImageFolder } from '../support/datasetFiles.js';
import { tf } from '../support/userModels.js';

const root = process.argv[2];
if (!root) throw new Error('usage: tsx test/e2e/dataSectionFiles.ts OUT_DIR');
await tf.setBackend('cpu');
await saveTableModel(join(root, 'table'));
await saveImageModel(join(root, 'image'));
writeFlowersCsv(join(root, 'flowers.csv'));
writeBadCsv(join(root, 'bad.csv'));
writeImageFolder(join(root, 'images'));
