import { copyFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parseArgs } from 'node:util';
import { registerUserLayers } from '../../wire/userLayers.js';
import { layersOption } from '../modelRef.js';
import type { CommandIo } from './commandIo.js';
import { exportWeights } from '../export/exportWeights.js';
import { processIo } from './jobIo.js';
import { pullNewestCheckpoint } from '../jobs/pullCheckpoint.js';
import { onePositional, reportCommandError } from './usage.js';

export const EXPORT_USAGE = 'shoal export <run | run folder | checkpoint> [--out DIR] [--layers FILE] [--json]     trained weights in tfjs format (model.json + weights; --layers: your layer module beside them)';

/** `shoal export <run> --out DIR`: the newest checkpoint's weights as a tfjs LayersModel folder. */
export async function runExportCommand(args: string[], io: CommandIo = processIo): Promise<number> {
  try {
    const { positionals, values } = parseArgs({ args, options: { out: { type: 'string' }, layers: { type: 'string' }, json: { type: 'boolean' } }, allowPositionals: true });
    const target = onePositional(positionals, 'the run, run folder or checkpoint to export', `Usage: ${EXPORT_USAGE}`);
    // A deployed job's checkpoints are on its head host: the newest comes home first.
    await pullNewestCheckpoint(target, (line) => io.err(`shoal: ${line}\n`));
    const layersFile = layersOption(values);
    // The module is run first: a file that does not register its classes is refused before anything is written.
    if (layersFile !== undefined) await registerUserLayers(layersFile);
    const result = exportWeights(target, values.out);
    if (layersFile !== undefined) {
      // Beside the model it describes, so the folder carries the classes its model.json names.
      copyFileSync(layersFile, join(result.dir, basename(layersFile)));
      result.files.push(basename(layersFile));
    }
    if (values.json) io.out(JSON.stringify(result) + '\n');
    else {
      io.out(`exported ${result.model} at step ${result.step} (${(result.bytes / 1e6).toFixed(2)} MB of weights) to ${result.dir}\n`);
      const first = layersFile === undefined ? '' : `register your classes first (${basename(layersFile)}: register(tf)), then `;
      io.out(`load it with: ${first}await tf.loadLayersModel('file://${result.dir}/model.json')  (tfjs-node), or serve the folder over http\n`);
    }
    return 0;
  } catch (err) {
    return reportCommandError('export', err, io);
  }
}
