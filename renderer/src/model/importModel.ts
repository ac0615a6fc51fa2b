import type { ModelGraph } from '../../../engine/model/graph';
import { formatBytes } from '../format';
import { manifestPaths, MAX_IMPORT_BYTES } from '../../../engine/protocol/modelImport';
import { studioClient } from '../store/actions';
import { errorText } from '../store/errorText';

/**
 * Hand a model opened in the renderer to the studio's Node side, which stores it where agents read it:
 * the model.json's document and the picked or dropped `.bin` files its weightsManifest names. The
 * graph that comes back names the stored file (`source.modelFile`), which is what Train runs.
 */
export async function importForTraining(fileName: string, text: string, modelBytes: number, others: readonly File[]): Promise<{ graph: ModelGraph } | { error: string }> {
  const client = studioClient();
  if (!client) return { error: 'Not connected to the studio.' };
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (error) {
    return { error: errorText(error) };
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return { error: `${fileName} is not a JSON object.` };
  const named = new Set(manifestPaths(doc as Record<string, unknown>));
  const weights = others.filter((f) => named.has(f.name));
  const bytes = modelBytes + weights.reduce((n, f) => n + f.size, 0);
  if (bytes > MAX_IMPORT_BYTES) {
    return { error: `${fileName} and its weights are ${formatBytes(bytes)}; the studio trains models up to ${formatBytes(MAX_IMPORT_BYTES)}. Train it with shoal train --model path/to/model.json --data DIR.` };
  }
  try {
    const files = await Promise.all(weights.map(async (f) => ({ path: f.name, base64: await base64Of(f) })));
    return { graph: await client.importModelFile({ name: fileName, modelJson: doc as Record<string, unknown>, weights: files }) };
  } catch (error) {
    return { error: errorText(error) };
  }
}

/** A file's bytes as base64 (the browser encodes it natively through a data URL). */
function base64Of(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => {
      const url = String(reader.result ?? '');
      const comma = url.indexOf(',');
      resolve(comma < 0 ? '' : url.slice(comma + 1));
    };
    reader.onerror = () => reject(new Error(`${file.name} could not be read (${reader.error?.message ?? 'unknown error'}).`));
    reader.readAsDataURL(file);
  });
}
