import { readFileSync, statSync } from 'node:fs';
import { LIMITS } from '../../plan/limits.js';
import { explainFileError } from '../../wire/fileErrors.js';

/**
 * A JSON input file (plan, cluster, model), read only if it is no larger than LIMITS.fileBytes: a
 * parsed document takes several times its size in memory, so a mistaken multi-gigabyte file is refused
 * by its size, before it is read. Every failure names the file and what to do.
 */
export function readJsonFile(file: string, what: string): unknown {
  let size: number;
  try {
    size = statSync(file).size;
  } catch (err) {
    throw explainFileError(err, `The ${what} file`, file);
  }
  if (size > LIMITS.fileBytes) {
    throw new Error(`The ${what} file ${file} is ${(size / 2 ** 20).toFixed(1)} MiB; Shoal reads ${what} files of at most ${LIMITS.fileBytes / 2 ** 20} MiB. Check that it is the right file.`);
  }
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw explainFileError(err, `The ${what} file`, file);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new Error(`The ${what} file ${file} is not valid JSON: ${(err as Error).message}.`);
  }
}
