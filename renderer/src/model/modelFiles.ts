import { create } from 'zustand';
import type { ModelGraph } from '../../../engine/model/graph';
import { selectModel, showModel } from '../store/actions';
import { useStudio } from '../store/studioStore';
import { MAX_MODEL_FILE_BYTES, pickModelFile, readModelFile } from './readModelFile';
import type { ModelFileProblem } from './readModelFile';

/**
 * Models opened from a file (picker or drop): the last one stays in the model picker under its own key
 * (`file:<name>`), next to the zoo, and flows into the same graph and plan state as a zoo model. A file
 * that cannot be opened leaves the current model as it was and shows the problem.
 */
export interface ImportedModel {
  key: string;
  fileName: string;
  graph: ModelGraph;
  /** The importer's findings, one line each. */
  notes: string[];
}

interface ModelFilesState {
  imported?: ImportedModel;
  problem?: ModelFileProblem;
  /** Findings of the file just opened, shown until dismissed. */
  notes?: { fileName: string; lines: string[] };
  reading?: string;
}

export const useModelFiles = create<ModelFilesState>()(() => ({}));

export const importedKey = (fileName: string) => `file:${fileName}`;

export function dismissModelFileMessage(): void {
  useModelFiles.setState({ problem: undefined, notes: undefined });
}

/** The model picker's choice: the imported model again, or a zoo model. */
export function chooseModel(key: string): void {
  const imported = useModelFiles.getState().imported;
  if (imported && key === imported.key) showModel(imported.key, imported.graph);
  else void selectModel(key);
}

function refuse(problem: ModelFileProblem): void {
  useModelFiles.setState({ problem, notes: undefined, reading: undefined });
}

/** Open the model topology among the given files (a model.json, perhaps with its weight shards). */
export async function openModelFiles(files: readonly File[]): Promise<void> {
  const file = pickModelFile(files);
  if (!file) {
    const names = files.map((f) => f.name).join(', ') || 'nothing';
    return refuse({ what: 'None of the files is a model.json.', where: names, fix: 'Drop or pick the model.json that Keras or tfjs wrote (the .bin files beside it are not needed).' });
  }
  if (file.size > MAX_MODEL_FILE_BYTES) {
    return refuse({ what: `The file is ${Math.round(file.size / 2 ** 20)} MiB; a model topology is far smaller.`, where: file.name, fix: 'Pick the model.json, not a weights file or an archive.' });
  }
  if (useStudio.getState().job && ['starting', 'running'].includes(useStudio.getState().job!.metrics.state)) {
    return refuse({ what: 'A job is running on the open model.', where: file.name, fix: 'Stop the job, then open the model again.' });
  }
  useModelFiles.setState({ reading: file.name, problem: undefined });
  let text: string;
  try {
    text = await file.text();
  } catch (error) {
    return refuse({ what: `The file could not be read (${(error as Error).message}).`, where: file.name, fix: 'Check that the file still exists and is readable, then open it again.' });
  }
  openModelText(file.name, text);
}

/** Open a model from the text of a model.json (what openModelFiles does once the file is read). */
export function openModelText(fileName: string, text: string): void {
  const result = readModelFile(fileName, text);
  if (!result.ok) return refuse(result.problem);
  const imported: ImportedModel = { key: importedKey(fileName), fileName, graph: result.graph, notes: result.notes };
  useModelFiles.setState({ imported, problem: undefined, reading: undefined, notes: result.notes.length ? { fileName, lines: result.notes } : undefined });
  showModel(imported.key, imported.graph);
}
