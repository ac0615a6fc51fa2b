import { parseArgs } from 'node:util';
import type { CommandIo } from './commandIo.js';
import { join } from 'node:path';
import { exportWeights, type ExportFormat } from '../export/exportWeights.js';
import { processIo } from './jobIo.js';
import { pullNewestCheckpoint } from '../jobs/pullCheckpoint.js';
import { onePositional, reportCommandError } from './usage.js';

export const EXPORT_USAGE = 'shoal export <run | run folder | checkpoint> [--format keras|h5|tfjs] [--out PATH] [--json]     the trained model, by default in the format it came in (.keras, .h5, or tfjs model.json + weights)';

const FORMATS = ['keras', 'h5', 'tfjs'] as const;

/** `shoal export <run> --out DIR`: the newest checkpoint's weights as a tfjs LayersModel folder. */
export async function runExportCommand(args: string[], io: CommandIo = processIo): Promise<number> {
  try {
    const { positionals, values } = parseArgs({ args, options: { out: { type: 'string' }, format: { type: 'string' }, json: { type: 'boolean' } }, allowPositionals: true });
    const target = onePositional(positionals, 'the run, run folder or checkpoint to export', `Usage: ${EXPORT_USAGE}`);
    // A deployed job's checkpoints are on its head host: the newest comes home first.
    await pullNewestCheckpoint(target, (line) => io.err(`shoal: ${line}\n`));
    const format = values.format;
    if (format !== undefined && !(FORMATS as readonly string[]).includes(format)) throw new Error(`--format takes ${FORMATS.join(', ')}; got "${format}".`);
    const result = exportWeights(target, values.out, undefined, format as ExportFormat | undefined);
    if (values.json) io.out(JSON.stringify(result) + '\n');
    else {
      const file = result.files[0];
      io.out(`exported ${result.model} at step ${result.step} (${(result.bytes / 1e6).toFixed(2)} MB) to ${file === 'model.json' ? result.dir : join(result.dir, file)}\n`);
      if (file === 'model.json') io.out(`load it with: await tf.loadLayersModel('file://${result.dir}/model.json')  (tfjs-node), or serve the folder over http\n`);
      else io.out(`load it with: keras.models.load_model("${join(result.dir, file)}")\n`);
    }
    return 0;
  } catch (err) {
    return reportCommandError('export', err, io);
  }
}
