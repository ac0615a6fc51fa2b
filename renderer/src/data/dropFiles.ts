import { DATA_UPLOAD_NAME, MAX_DATA_UPLOAD_BYTES } from '../../../engine/protocol/datasetInspect';
import { formatBytes } from '../format';
import { studioClient } from '../store/actions';
import { errorText } from '../store/errorText';

/**
 * A data file dropped on the Data section in the browser shell: the page has its bytes, not a path, so
 * it is sent over the studio's authenticated channel (checked against the size cap first, here and on
 * the Node side) and stored in the studio's data folder; the path that comes back is inspected like a
 * typed one.
 */
export async function uploadDroppedFile(files: readonly File[]): Promise<{ path: string } | { error: string }> {
  if (files.length !== 1) return { error: `Drop one data file (a .csv, .tsv, .jsonl or .npz); ${files.length} were dropped. For a folder of images or .npy files, type its path.` };
  const [file] = files;
  if (!DATA_UPLOAD_NAME.test(file.name)) return { error: `${file.name} is not a data file the studio takes by drop: use a .csv, .tsv, .jsonl, .ndjson or .npz file, or type the path of a folder.` };
  if (file.size > MAX_DATA_UPLOAD_BYTES) return { error: `${file.name} is ${formatBytes(file.size)}; a dropped file is at most ${formatBytes(MAX_DATA_UPLOAD_BYTES)}. Type its path on this machine instead.` };
  const client = studioClient();
  if (!client) return { error: 'Not connected to the studio.' };
  try {
    const { path } = await client.uploadDataFile({ name: file.name, base64: await base64Of(file) });
    return { path };
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
      resolve(url.slice(url.indexOf(',') + 1));
    };
    reader.onerror = () => reject(new Error(`${file.name} could not be read (${reader.error?.message ?? 'unknown error'}).`));
    reader.readAsDataURL(file);
  });
}
