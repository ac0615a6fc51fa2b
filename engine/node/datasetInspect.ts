import { modelArrays, type ModelArrays } from '../data/modelArrays.js';
import type { ModelGraph } from '../model/graph.js';
import { trainingSpecFor } from '../model/trainingSpec.js';
import type { DatasetField, DatasetInspection, FeedCheck, InspectDatasetRequest } from '../protocol/datasetInspect.js';
import type { Dataset } from '../wire/data/dataset.js';
import { openDescribedDataset } from '../wire/data/openDescribed.js';
import { arrayImages, arrayRows, classBalance, imageFolderBalance, imageThumbnails, previewFile } from './datasetSamples.js';
import { resolveDatasetChoice, resolveDescription, type DatasetDiagnostic } from './datasetResolve.js';
import { isImportedModelFile, modelsRoot } from './modelImport.js';
import { isModelFile, loadModel, modelDocument } from './modelRef.js';

/**
 * The studio's look at a dataset before it trains on it: resolve the Data section's fields (or a
 * description), open the data with the readers Train uses, against the model the plan names, and
 * report what the section shows. Nothing throws for bad data: every problem is a diagnostic beside the
 * field it concerns, with the file and row the reader named. The readers index a table or JSON Lines
 * file once (cached by checksum); the rest reads only heads, a few images and the labels.
 */
export function inspectDataset(request: InspectDatasetRequest): DatasetInspection {
  const { model: modelName, loss, choice, description } = request;
  const resolved = choice ? resolveDatasetChoice(choice) : resolveDescription(description!);
  const diagnostics: DatasetDiagnostic[] = [...resolved.diagnostics];
  const result: DatasetInspection = { source: resolved.source, format: resolved.format, ...(resolved.ref ? { ref: resolved.ref } : {}), feeds: [], classes: [], samples: { kind: 'none' }, diagnostics };
  const dataset = resolved.ref?.kind === 'dataset' ? resolved.ref.dataset : undefined;
  if (!dataset) return result;

  // What can be shown without the model: the head of the file, the images and their classes.
  try {
    if (dataset.format === 'images') result.samples = imageThumbnails(dataset.source);
    else {
      const preview = previewFile(dataset.source, dataset.format);
      result.samples = preview.samples;
      if (preview.columns.length) result.columns = preview.columns;
    }
  } catch (err) {
    diagnostics.push(readerDiagnostic(err, result.columns, choice?.labelColumn, choice?.featureColumns));
    return result;
  }

  let graph: ModelGraph;
  let arrays: ModelArrays;
  try {
    graph = studioModel(modelName);
  } catch (err) {
    diagnostics.push({ severity: 'error', code: 'dataset-model', message: (err as Error).message, hint: 'Open the model again (a zoo model, or Open model.json… with its weights).', where: { field: 'model' } });
    return result;
  }
  try {
    arrays = modelArrays(graph, trainingSpecFor(graph, modelDocument(graph), { loss }).outputs);
  } catch (err) {
    diagnostics.push({ severity: 'error', code: 'dataset-loss', message: (err as Error).message, hint: 'Pick a loss under Data for the model\'s outputs.', where: { field: 'loss' } });
    return result;
  }
  let opened: Dataset | undefined;
  try {
    opened = openDescribedDataset(dataset, arrays, 0);
  } catch (err) {
    const found = readerDiagnostic(err, result.columns, choice?.labelColumn, choice?.featureColumns);
    diagnostics.push(found);
    result.feeds = feedChecks(arrays, undefined, found.message);
    if (dataset.format === 'images') result.classes = imageFolderBalance(dataset.source, arrays.targets[0]?.name ?? 'output');
    return result;
  }
  try {
    result.describe = opened.describe;
    result.counts = { train: opened.train.size, validation: opened.validation.size };
    result.feeds = feedChecks(arrays, opened, undefined);
    result.classes = classBalance(opened, arrays);
    if (dataset.format === 'npy' || dataset.format === 'npz') result.samples = arrayImages(opened, arrays) ?? arrayRows(opened);
    if (!opened.validation.size) {
      diagnostics.push({ severity: 'warning', code: 'dataset-no-validation', message: 'No validation samples: the run reports training loss only.', hint: 'Set a validation split (e.g. 0.2).', where: { field: 'validationSplit' } });
    }
  } catch (err) {
    diagnostics.push(readerDiagnostic(err, result.columns, choice?.labelColumn, choice?.featureColumns));
  } finally {
    opened.close();
  }
  return result;
}

/** The model the plan names, as Train loads it: a zoo model or a model file the studio imported. */
function studioModel(name: string): ModelGraph {
  if (isModelFile(name) && !isImportedModelFile(name)) throw new Error(`The studio reads model files it imported (under ${modelsRoot()}); ${name} is not one.`);
  return loadModel(name);
}

/** Each model input and output against the data: the data's shape when it opened, else whether the problem names it. */
function feedChecks(arrays: ModelArrays, opened: Dataset | undefined, problem: string | undefined): FeedCheck[] {
  const check = (side: FeedCheck['side']) => (a: ModelArrays['inputs'][number]): FeedCheck => {
    const data = opened?.arrays.find((d) => d.name === a.name);
    const status = data ? 'match' : problem?.includes(`'${a.name}'`) ? 'mismatch' : 'unknown';
    return { side, layer: a.name, modelShape: a.shape, ...(data ? { dataShape: data.shape } : {}), status };
  };
  return [...arrays.inputs.map(check('input')), ...arrays.targets.map(check('output'))];
}

/**
 * A reader's refusal as a diagnostic: the file and row it names, and the section field that sets what
 * it is about (a label or feature column by name, the image size, the split), else the path.
 */
export function readerDiagnostic(err: unknown, columns: string[] | undefined, label: string | undefined, features: string[] | undefined): DatasetDiagnostic {
  const message = err instanceof Error ? err.message : String(err);
  // "<file> row 7, column 'x': …", "<file> column 'y' row 7: …", "<file> line 3: …", "<file>: …".
  const at = /^(\/[^\n]*?)(?: column '[^']*')? (?:row|line) (\d+)[,:]/.exec(message);
  const file = at?.[1] ?? /^(\/\S+?):/.exec(message)?.[1];
  const labelColumn = label ?? columns?.[columns.length - 1];
  const column = /column '([^']+)'/.exec(message)?.[1];
  let field: DatasetField = 'source';
  if (/\(label of|label column|labels are|the label|label "|label \d/.test(message) || (column !== undefined && column === labelColumn)) field = 'labelColumn';
  else if (/feature|\(feature of/.test(message) || (column !== undefined && (features?.includes(column) ?? true))) field = 'featureColumns';
  else if (/imageSize|takes images of any size/.test(message)) field = 'imageSize';
  else if (/validationSplit/.test(message)) field = 'validationSplit';
  else if (/loss/.test(message) && !file) field = 'loss';
  const hint = field === 'labelColumn' ? 'Pick the column that holds the labels, or check the loss and the model\'s output size.'
    : field === 'featureColumns' ? 'Pick numeric feature columns, as many as the model input takes.'
      : field === 'imageSize' ? 'Set the image size the model takes.'
        : field === 'validationSplit' ? 'Use a smaller validation split.'
          : 'Fix the data (the message names the file and row), or pick other data.';
  return { severity: 'error', code: 'dataset-reader', message, hint, where: { field, ...(file ? { file } : {}), ...(at ? { row: Number(at[2]) } : {}) } };
}
