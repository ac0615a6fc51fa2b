import { z } from 'zod';

/**
 * Handing the studio's Node side a model the user opened in the renderer (picked or dropped: the
 * renderer has the files' contents, not their paths), so that agents can read it from disk: the
 * parsed model.json and the `.bin` files its weightsManifest names, base64-encoded.
 */

/** Bound on one import: model.json's text plus the decoded weights. */
export const MAX_IMPORT_BYTES = 64 * 1024 * 1024;
/** Bound on one message to the studio's Node side: an import at its bound in base64, with room to spare. */
export const MAX_RPC_MESSAGE_BYTES = Math.ceil((MAX_IMPORT_BYTES * 4) / 3) + 8 * 1024 * 1024;
/** A weights file is named by its manifest path: a plain file name, as model.save() writes it. */
export const WEIGHT_FILE_NAME = /^(?!\.{1,2}$)[^/\\\0]{1,255}$/;

export const WeightFileSchema = z.object({
  path: z.string().regex(WEIGHT_FILE_NAME, 'a weights file is a plain file name (no folders)'),
  base64: z
    .string()
    .max(Math.ceil(MAX_IMPORT_BYTES / 3) * 4, `a weights file is at most ${MAX_IMPORT_BYTES / 2 ** 20} MiB`)
    .regex(/^[A-Za-z0-9+/]*={0,2}$/, 'not base64'),
});

export const ImportModelRequestSchema = z.object({
  /** The file name the user opened (for messages): "model.json". */
  name: z.string().trim().min(1).max(500),
  /** The parsed model.json document. */
  modelJson: z.record(z.string(), z.unknown()),
  /** The `.bin` files picked or dropped with it; those its weightsManifest names are required. */
  weights: z.array(WeightFileSchema).max(256).optional(),
});
export type ImportModelRequest = z.infer<typeof ImportModelRequestSchema>;
export type WeightFile = z.infer<typeof WeightFileSchema>;

/** Bytes a base64 text decodes to. */
export function base64Bytes(base64: string): number {
  const padding = base64.endsWith('==') ? 2 : base64.endsWith('=') ? 1 : 0;
  return Math.floor((base64.length * 3) / 4) - padding;
}

/** The weights files a model.json's weightsManifest names, in manifest order (none for a topology-only file). */
export function manifestPaths(modelJson: Record<string, unknown>): string[] {
  const manifest = modelJson.weightsManifest;
  if (!Array.isArray(manifest)) return [];
  return manifest.flatMap((group: unknown) => {
    const paths = typeof group === 'object' && group !== null ? (group as { paths?: unknown }).paths : undefined;
    return Array.isArray(paths) ? paths.filter((p): p is string => typeof p === 'string') : [];
  });
}
