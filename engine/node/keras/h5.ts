import h5wasm from 'h5wasm/node';

/**
 * HDF5 through h5wasm (the HDF5 C library compiled to WebAssembly; its Node build reads and writes
 * the host's files directly, one dataset at a time). Its module loads asynchronously once; after
 * `h5Ready()` every call is synchronous, so the model loaders stay synchronous.
 */
let loaded = false;

export async function h5Ready(): Promise<void> {
  await h5wasm.ready;
  loaded = true;
}

export type H5File = InstanceType<typeof h5wasm.File>;
export type H5Group = InstanceType<typeof h5wasm.Group>;
export type H5Dataset = InstanceType<typeof h5wasm.Dataset>;
export const { Group, Dataset } = h5wasm;

export function openH5(path: string, mode: 'r' | 'w'): H5File {
  if (!loaded) throw new Error(`Reading ${path} needs the HDF5 reader, which was not loaded: call h5Ready() first (the CLI does so for .keras and .h5 files).`);
  return new h5wasm.File(path, mode);
}

/** The group at `path`, creating every missing group on the way (h5wasm creates one level at a time). */
export function groupAt(file: H5File, path: string): H5Group {
  let group: H5Group = file;
  for (const part of path.split('/').filter(Boolean)) {
    const next = group.get(part);
    group = next instanceof h5wasm.Group ? next : group.create_group(part);
  }
  return group;
}

/** A string attribute's value, or undefined (HDF5 strings come back as a string or a one-element array). */
export function stringAttr(node: H5Group | H5Dataset, name: string): string | undefined {
  const v = node.attrs[name]?.value as unknown;
  if (typeof v === 'string') return v;
  if (Array.isArray(v) && typeof v[0] === 'string' && v.length === 1) return v[0];
  return undefined;
}

/** A list-of-strings attribute (Keras 2's `layer_names`, `weight_names`), or undefined. */
export function stringListAttr(node: H5Group, name: string): string[] | undefined {
  const attr = node.attrs[name];
  if (!attr) return undefined;
  const v = attr.value as unknown;
  if (typeof v === 'string') return [v];
  if (Array.isArray(v) && v.every((s) => typeof s === 'string')) return v as string[];
  if (ArrayBuffer.isView(v) && (v as unknown as ArrayLike<number>).length === 0) return [];
  return undefined;
}
