import { readdirSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { DataRef } from '../../protocol/trainingSetup.js';
import { hostPath } from '../../wire/hostPath.js';

/** Images as the image-folder reader takes them (engine/wire/data/imageFolder.ts). */
const IMAGE = /\.(png|jpe?g)$/i;

/**
 * The files a job's data reader opens, and nothing else: a NumPy folder's .npy files and its val/
 * folder's; an image folder's class folders of images; the one file of a CSV/TSV table, a JSON Lines
 * file or an .npz archive (a table's `.shoal-index.json` stays here: a host indexes its own copy).
 */
export interface DataFiles {
  /** The folder the files are relative to, as written in the job (`~/…` stays as is). */
  dir: string;
  /** The files, relative to `dir`, sorted. */
  relatives: string[];
  /** The data's source relative to `dir`: '' for a folder, the file's name for a single-file dataset. */
  source: string;
  /** The dataset says it already sits at the same path on every host (`location: "hosts"`). */
  onHosts: boolean;
  /** The data reference with the data at `dir` instead (where a host received the files). */
  movedTo(dir: string): DataRef;
}

/** The files of a data reference, or null when it has none (the bundled digits, synthetic data). */
export function dataFiles(ref: DataRef): DataFiles | null {
  if (ref.kind === 'npy') {
    return { dir: ref.dir, relatives: npyFiles(hostPath(ref.dir)), source: '', onHosts: false, movedTo: (dir) => ({ ...ref, dir }) };
  }
  if (ref.kind !== 'dataset') return null;
  const d = ref.dataset;
  const onHosts = d.location === 'hosts';
  const moved = (source: string): DataRef => ({ ...ref, dataset: { ...d, source } });
  if (d.format === 'npy' || d.format === 'images') {
    const local = hostPath(d.source);
    return { dir: d.source, relatives: d.format === 'npy' ? npyFiles(local) : imageFiles(local), source: '', onHosts, movedTo: moved };
  }
  const name = basename(d.source);
  return { dir: dirname(d.source), relatives: [name], source: name, onHosts, movedTo: (dir) => moved(`${dir}/${name}`) };
}

/** The .npy files of a data folder and of its val/ subfolder, relative to it. */
function npyFiles(dir: string): string[] {
  const list = (sub: string) =>
    readdirSync(join(dir, sub))
      .filter((f) => f.endsWith('.npy'))
      .sort()
      .map((f) => (sub ? `${sub}/${f}` : f));
  let val: string[] = [];
  try {
    if (statSync(join(dir, 'val')).isDirectory()) val = list('val');
  } catch {
    // No val/ folder: the validation split is held out by seed.
  }
  return [...list(''), ...val];
}

/**
 * `<class>/<image>` for every class folder (names not starting with a dot) and image in it, and
 * `<split>/<class>/<image>` for a split made by hand (`train/` beside `val/` or `validation/`).
 */
function imageFiles(dir: string): string[] {
  const classImages = (sub: string) =>
    readdirSync(join(dir, sub), { withFileTypes: true })
      .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
      .map((e) => e.name)
      .sort()
      .flatMap((c) =>
        readdirSync(join(dir, sub, c))
          .filter((f) => IMAGE.test(f) && !f.startsWith('.'))
          .sort()
          .map((f) => (sub ? `${sub}/${c}/${f}` : `${c}/${f}`)),
      );
  const splits = ['train', 'val', 'validation'].filter((s) => {
    try {
      return statSync(join(dir, s)).isDirectory();
    } catch {
      return false;
    }
  });
  return [...classImages(''), ...splits.flatMap(classImages)];
}

/**
 * `--data-on-hosts`: the same data reference, marked as sitting at the same path on every host. A bare
 * NumPy folder becomes the equivalent described dataset (format npy), which can carry the mark.
 */
export function markOnHosts(ref: DataRef, option: string): DataRef {
  if (ref.kind === 'dataset') return { ...ref, dataset: { ...ref.dataset, location: 'hosts' } };
  if (ref.kind === 'npy') {
    return { kind: 'dataset', dataset: { format: 'npy', source: ref.dir, location: 'hosts', ...(ref.validationSplit === undefined ? {} : { validationSplit: ref.validationSplit }), ...(ref.validationHoldOut === undefined ? {} : { validationHoldOut: ref.validationHoldOut }) } };
  }
  throw new Error(`${option} takes a data file or folder that sits at the same path on every host; ${ref.kind} data has no files. Use --data ${ref.kind} instead.`);
}
