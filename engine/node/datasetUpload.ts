import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { base64Bytes } from '../protocol/modelImport.js';
import { MAX_DATA_UPLOAD_BYTES, type UploadDataFileRequest } from '../protocol/datasetInspect.js';
import { publishFolder, syncFolder, writeNewFileDurably } from '../wire/durableFiles.js';
import { runsRoot } from './jobs/runStore.js';

/**
 * Data files dropped on the browser shell's Data section (the page has their bytes, not a path), stored
 * where Train reads them: `<data dir>/datasets/<content hash>/<file name>`, mode 600 in a folder of
 * mode 700. The same content under the same name lands in the same place, so a second drop stores nothing.
 */
export function datasetsRoot(): string {
  return join(dirname(runsRoot()), 'datasets');
}

export function uploadDataFile(request: UploadDataFileRequest, root = datasetsRoot()): { path: string; bytes: number } {
  const { name, base64 } = request;
  const size = base64Bytes(base64);
  if (size > MAX_DATA_UPLOAD_BYTES) {
    throw new Error(`${name} is ${(size / 2 ** 20).toFixed(1)} MiB; the studio takes dropped files up to ${MAX_DATA_UPLOAD_BYTES / 2 ** 20} MiB. Type the path of a larger file on this machine instead.`);
  }
  const data = Buffer.from(base64, 'base64');
  const dir = join(root, createHash('sha256').update(name).update('\0').update(data).digest('hex').slice(0, 32));
  const file = join(dir, name);
  if (existsSync(file)) return { path: file, bytes: data.length };
  try {
    mkdirSync(root, { recursive: true, mode: 0o700 });
    const tmp = mkdtempSync(join(root, '.upload-'));
    try {
      writeNewFileDurably(join(tmp, name), data, 0o600);
      syncFolder(tmp);
      // The same file dropped twice at once: the first is kept.
      publishFolder(tmp, dir, file);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOSPC' || code === 'EACCES' || code === 'EROFS') throw new Error(`Cannot store ${name} under ${root}: ${code === 'ENOSPC' ? 'the disk is full' : 'the folder is not writable'}. Free space or set SHOAL_DATA_DIR to another folder.`);
    throw err;
  }
  return { path: file, bytes: data.length };
}
