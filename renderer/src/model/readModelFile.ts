import type { ModelGraph } from '../../../engine/model/graph';
import { importKerasModel } from '../../../engine/model/import/importKeras';
import type { Diagnostic } from '../../../engine/plan/diagnostics';

/**
 * Reading a Keras / tfjs-layers `model.json` that the user picked or dropped: pure, so the studio and
 * the tests share it. A file that cannot be opened comes back as a problem that says what went wrong,
 * where, and what to do; a file that opens with findings (unknown layers, skipped parts) comes back
 * with those findings as notes, so the user sees what the estimate leaves out.
 */
export interface ModelFileProblem {
  what: string;
  where: string;
  fix: string;
}

export type ModelFileResult =
  | { ok: true; graph: ModelGraph; notes: string[]; errors: number }
  | { ok: false; problem: ModelFileProblem };

const REEXPORT = 'Re-export the model from Keras (model.save("….keras") then tensorflowjs_converter) or tfjs (model.save / model.toJSON), and open the resulting model.json.';

/** At most this many bytes are read: a topology is small; weights live in the .bin files beside it. */
export const MAX_MODEL_FILE_BYTES = 64 * 1024 * 1024;

/** "line 3, column 14" for an offset into a text. */
export function lineAndColumn(text: string, offset: number): string {
  const before = text.slice(0, Math.max(0, Math.min(offset, text.length)));
  const line = before.split('\n').length;
  const column = offset - before.lastIndexOf('\n');
  return `line ${line}, column ${column}`;
}

/** Where a JSON.parse error points, from the engine's message ("… at position 42" or "(line 2 column 5)"). */
export function jsonErrorWhere(text: string, message: string): string | undefined {
  const lineCol = /line (\d+) column (\d+)/.exec(message);
  if (lineCol) return `line ${lineCol[1]}, column ${lineCol[2]}`;
  const position = /position (\d+)/.exec(message);
  if (position) return lineAndColumn(text, Number(position[1]));
  if (/unexpected end/i.test(message)) return `the end of the file (${lineAndColumn(text, text.length)})`;
  return undefined;
}

/** One line per finding: "layer f: Layer "f" has class Foo … — If the layer …". */
export function describeFinding(d: Diagnostic): string {
  const where = d.where.layer !== undefined ? `layer ${d.where.layer}: ` : '';
  return `${d.severity === 'error' ? 'Error' : 'Warning'} — ${where}${d.message} ${d.hint}`;
}

/** Of the files dropped or picked, the model topology: the one .json file (weights .bin files are ignored). */
export function pickModelFile<T extends { name: string }>(files: readonly T[]): T | undefined {
  return files.find((f) => f.name.toLowerCase().endsWith('.json')) ?? (files.length === 1 ? files[0] : undefined);
}

export function readModelFile(fileName: string, text: string): ModelFileResult {
  const where = fileName || 'the file';
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (error) {
    const message = (error as Error).message;
    const at = jsonErrorWhere(text, message);
    return {
      ok: false,
      problem: {
        what: `The file is not valid JSON (${message}).`,
        where: at ? `${where}, ${at}` : where,
        fix: text.trim() === '' ? 'The file is empty: pick the model.json that Keras or tfjs wrote.' : `Check that this is the model.json itself (not a .bin weights file) and that it was saved completely. ${REEXPORT}`,
      },
    };
  }
  let imported: ReturnType<typeof importKerasModel>;
  try {
    imported = importKerasModel(doc);
  } catch (error) {
    return { ok: false, problem: { what: (error as Error).message, where, fix: REEXPORT } };
  }
  const { graph, diagnostics } = imported;
  const notes = diagnostics.map(describeFinding);
  const errors = diagnostics.filter((d) => d.severity === 'error').length;
  if (!graph.layers.some((l) => l.spec.kind !== 'input')) {
    const first = diagnostics.find((d) => d.severity === 'error') ?? diagnostics[0];
    return {
      ok: false,
      problem: {
        what: `Model "${graph.name}" has no layers Shoal can draw${first ? `: ${first.message}` : ' (its layer list is empty)'}.`,
        where: first?.where.layer !== undefined ? `${where}, layer ${first.where.layer}` : where,
        fix: first ? `${first.hint} ${REEXPORT}` : REEXPORT,
      },
    };
  }
  return { ok: true, graph, notes, errors };
}
