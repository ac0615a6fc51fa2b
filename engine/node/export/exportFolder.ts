import { existsSync, readFileSync, statSync } from 'node:fs';
import { makeFolders } from '../../wire/fileErrors.js';
import { dirname, join } from 'node:path';

/**
 * Where `shoal export` may write a model: a folder (new, or holding an earlier Shoal export, which is
 * replaced), never a file, and never a folder whose model.json someone else wrote — the model a run
 * was trained from, say — since the export would replace it. Refusals name the path and what to do.
 */
export function prepareExportFolder(dir: string): void {
  let existing = dir;
  while (!existsSync(existing) && dirname(existing) !== existing) existing = dirname(existing);
  if (!statSync(existing).isDirectory()) {
    throw new Error(`Export folder ${dir} (--out): ${existing} is a file, not a folder. Give a folder for model.json and its weights.`);
  }
  const modelJson = join(dir, 'model.json');
  if (existsSync(modelJson) && !isShoalExport(modelJson)) {
    throw new Error(`Export folder ${dir} (--out) already holds a model.json that is not a Shoal export (the model trained from?); exporting there would replace it. Choose another folder (--out).`);
  }
  makeFolders(dir, 'Export folder (--out)');
}

/** A model.json an earlier `shoal export` wrote: it records the checkpoint it came from. */
function isShoalExport(file: string): boolean {
  try {
    const doc = JSON.parse(readFileSync(file, 'utf8')) as { userDefinedMetadata?: { shoal?: { checkpoint?: unknown } } };
    return typeof doc.userDefinedMetadata?.shoal?.checkpoint === 'string';
  } catch {
    return false;
  }
}
