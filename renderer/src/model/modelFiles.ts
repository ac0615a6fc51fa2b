import { create } from 'zustand';
import type { ModelGraph } from '../../../engine/model/graph';
import { selectModel, showModel } from '../store/actions';
import { useStudio } from '../store/studioStore';
import { importForTraining } from './importModel';
import { MAX_MODEL_FILE_BYTES, pickModelFile, readModelFile } from './readModelFile';
import type { ModelFileProblem } from './readModelFile';

/**
 * Models opened from a file (picker or drop, the model.json with its .bin files): the last one stays in
 * the model picker under its own key (`file:<name>`), next to the zoo, and flows into the same graph and
 * plan state as a zoo model. It is also handed to the studio's Node side, which stores it for the
 * agents: the graph shown then names the stored file, and Train runs it. A file that cannot be opened
 * leaves the current model as it was and shows the problem; one that opens but cannot be stored is
 * shown and planned, with the reason it cannot train.
 */
export interface ImportedModel {
  key: string;
  fileName: string;
  graph: ModelGraph;
  /** The importer's findings, one line each. */
  notes: string[];
  /** Why the studio could not store it for training (missing weights, too large…); absent when it can train. */
  trainError?: string;
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

let opening = 0;

/** Open the model among the given files: a model.json, with the weight shards it names to train it. */
export async function openModelFiles(files: readonly File[]): Promise<void> {
  const file = pickModelFile(files);
  if (!file) {
    const names = files.map((f) => f.name).join(', ') || 'nothing';
    return refuse({ what: 'None of the files is a model.json.', where: names, fix: 'Drop or pick the model.json that Keras or tfjs wrote, together with the .bin files beside it.' });
  }
  if (file.size > MAX_MODEL_FILE_BYTES) {
    return refuse({ what: `The file is ${Math.round(file.size / 2 ** 20)} MiB; a model topology is far smaller.`, where: file.name, fix: 'Pick the model.json, not a weights file or an archive.' });
  }
  if (useStudio.getState().job && ['starting', 'running'].includes(useStudio.getState().job!.metrics.state)) {
    return refuse({ what: 'A job is running on the open model.', where: file.name, fix: 'Stop the job, then open the model again.' });
  }
  const mine = ++opening;
  useModelFiles.setState({ reading: file.name, problem: undefined });
  let text: string;
  try {
    text = await file.text();
  } catch (error) {
    return refuse({ what: `The file could not be read (${(error as Error).message}).`, where: file.name, fix: 'Check that the file still exists and is readable, then open it again.' });
  }
  const result = readModelFile(file.name, text);
  if (!result.ok) return refuse(result.problem);
  const stored = await importForTraining(file.name, text, file.size, files.filter((f) => f !== file));
  // A later open replaced this one while it was being stored.
  if (mine !== opening) return;
  const graph = 'graph' in stored ? stored.graph : result.graph;
  const imported: ImportedModel = { key: importedKey(file.name), fileName: file.name, graph, notes: result.notes, trainError: 'error' in stored ? stored.error : undefined };
  useModelFiles.setState({ imported, problem: undefined, reading: undefined, notes: result.notes.length ? { fileName: file.name, lines: result.notes } : undefined });
  showModel(imported.key, imported.graph);
}
