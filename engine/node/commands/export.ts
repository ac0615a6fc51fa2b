import { copyFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parseArgs } from 'node:util';
import { registerUserLayers } from '../../wire/userLayers.js';
import { layersOption } from '../modelRef.js';
import type { CommandIo } from './commandIo.js';
import { exportWeights, type ExportFormat } from '../export/exportWeights.js';
import { processIo } from './jobIo.js';
import { pullNewestCheckpoint } from '../jobs/pullCheckpoint.js';
import { onePositional, reportCommandError } from './usage.js';

export const EXPORT_USAGE = 'shoal export <run | run folder | checkpoint> [--format keras|h5|tfjs] [--out PATH] [--layers FILE] [--json]     the trained model, by default in the format it came in (.keras, .h5, or tfjs model.json + weights; --layers: your layer module beside a tfjs export)';

const FORMATS = ['keras', 'h5', 'tfjs'] as const;

/** `shoal export <run> --out DIR`: the newest checkpoint's weights as a tfjs LayersModel folder. */
export async function runExportCommand(args: string[], io: CommandIo = processIo): Promise<number> {
  try {
    const { positionals, values } = parseArgs({ args, options: { out: { type: 'string' }, format: { type: 'string' }, layers: { type: 'string' }, json: { type: 'boolean' } }, allowPositionals: true });
    const target = onePositional(positionals, 'the run, run folder or checkpoint to export', `Usage: ${EXPORT_USAGE}`);
    // A deployed job's checkpoints are on its head host: the newest comes home first.
    await pullNewestCheckpoint(target, (line) => io.err(`shoal: ${line}\n`));
    const format = values.format;
    if (format !== undefined && !(FORMATS as readonly string[]).includes(format)) throw new Error(`--format takes ${FORMATS.join(', ')}; got "${format}".`);
    const layersFile = layersOption(values);
    if (layersFile !== undefined && format !== undefined && format !== 'tfjs') throw new Error(`--layers goes with a tfjs export: a .${format === 'keras' ? 'keras' : 'h5'} file names its classes for Keras, which registers its own. Give --format tfjs, or leave out --layers.`);
    // The module is run first: a file that does not register its classes is refused before anything is written.
    if (layersFile !== undefined) await registerUserLayers(layersFile);
    const result = exportWeights(target, values.out, undefined, format as ExportFormat | undefined);
    if (layersFile !== undefined) {
      // Beside the model it describes, so the folder carries the classes its model.json names.
      copyFileSync(layersFile, join(result.dir, basename(layersFile)));
      result.files.push(basename(layersFile));
    }
    if (values.json) io.out(JSON.stringify(result) + '\n');
    else {
      const file = result.files[0];
      io.out(`exported ${result.model} at step ${result.step} (${(result.bytes / 1e6).toFixed(2)} MB) to ${file === 'model.json' ? result.dir : join(result.dir, file)}\n`);
      const first = layersFile === undefined ? '' : `register your classes first (${basename(layersFile)}: register(tf)), then `;
      if (file === 'model.json') io.out(`load it with: ${first}await tf.loadLayersModel('file://${result.dir}/model.json')  (tfjs-node), or serve the folder over http\n`);
      else io.out(`load it with: keras.models.load_model("${join(result.dir, file)}")\n`);
    }
    return 0;
  } catch (err) {
    return reportCommandError('export', err, io);
  }
}
