import { z } from 'zod';
import { readRecord, type RecordFormat } from './versionedRecord.js';
import type { ModelGraph } from '../model/graph.js';
import { PlanSchema } from '../plan/plan.js';
import { DataRefSchema, withEarlierHoldOut } from './trainingSetup.js';

/**
 * A Shoal project (`*.shoal.json`): which model, which plan and which cluster, so a design can be
 * saved, shared and reopened. The model is a zoo name, or — for a model opened from a file — its
 * imported graph, so the project opens without the original file. The cluster is a reference (a
 * built-in choice or a stored SSH cluster's name), never host keys or credentials.
 */
export const PROJECT_EXTENSION = '.shoal.json';
/** Bound on what the studio reads as a project (an imported graph of a few thousand layers fits). */
export const MAX_PROJECT_BYTES = 32 * 1024 * 1024;

const ModelGraphShape = z
  .object({
    name: z.string(),
    description: z.string(),
    layers: z.array(z.object({ id: z.string(), spec: z.object({ kind: z.string() }).passthrough(), inputs: z.array(z.string()), outputShape: z.array(z.number()) }).passthrough()).min(1),
    outputs: z.array(z.string()),
  })
  .passthrough();

export const ProjectModelSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('zoo'), name: z.string().min(1).max(200) }),
  z.object({ kind: z.literal('file'), fileName: z.string().min(1).max(500), graph: ModelGraphShape }),
]);

export const ProjectClusterSchema = z.discriminatedUnion('kind', [
  /** "This machine" with N agents, or one of the example cluster specs shipped with the studio. */
  z.object({ kind: z.literal('builtin'), name: z.string().min(1).max(200), agents: z.number().int().min(1).max(4096) }),
  /** A cluster stored in clusters.json (`shoal cluster add|import`), by name. */
  z.object({ kind: z.literal('stored'), name: z.string().min(1).max(200) }),
]);

/** The version of project files this Shoal writes; change it, with an upgrade, when ProjectSchema changes. */
export const PROJECT_VERSION = 2;

export const ProjectSchema = z.object({
  format: z.literal('shoal-project'),
  version: z.literal(PROJECT_VERSION),
  name: z.string().min(1).max(200),
  savedAt: z.string(),
  model: ProjectModelSchema,
  /** The plan as edited; absent when the model had none (a preset cannot cut it). */
  plan: PlanSchema.optional(),
  /** Where the plan came from ("pp2-dp2", "auto-plan #1"), and whether it was edited since. */
  planSource: z.string().max(200).optional(),
  planEdited: z.boolean().optional(),
  cluster: ProjectClusterSchema,
  training: z
    .object({
      epochs: z.number().positive().max(1000),
      /** What Train trains on (absent: the bundled MNIST digits), and the loss for outputs the model file gives none. */
      data: DataRefSchema.optional(),
      loss: z.string().max(100).optional(),
    })
    .optional(),
});
export type Project = z.infer<typeof ProjectSchema>;

/** Project files carried version 1 from the start; version 1's validation split was a seeded random hold-out. */
export const PROJECT_FORMAT: RecordFormat<typeof ProjectSchema> = {
  what: 'Shoal project',
  version: PROJECT_VERSION,
  schema: ProjectSchema,
  upgrades: {
    1: (older) => {
      const training = older.training as Record<string, unknown> | undefined;
      return training ? { ...older, training: { ...training, data: withEarlierHoldOut(training.data) } } : older;
    },
  },
};

export type ProjectParse = { ok: true; project: Project; graph?: ModelGraph } | { ok: false; problem: string };

/** Read a project file's text: a readable problem (what and where) instead of an exception. */
export function parseProject(text: string, fileName = 'the file'): ProjectParse {
  if (text.length > MAX_PROJECT_BYTES) return { ok: false, problem: `${fileName} is ${Math.round(text.length / 2 ** 20)} MiB; a Shoal project is far smaller. Pick the .shoal.json the studio saved.` };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { ok: false, problem: `${fileName} is not valid JSON (${(error as Error).message}). Pick a .shoal.json file the studio saved.` };
  }
  if (typeof json !== 'object' || json === null || (json as { format?: unknown }).format !== 'shoal-project') {
    return { ok: false, problem: `${fileName} is not a Shoal project: it has no "format": "shoal-project". To open a Keras or tfjs model.json, use Open model instead.` };
  }
  let project: Project;
  try {
    project = readRecord(PROJECT_FORMAT, json, fileName);
  } catch (error) {
    return { ok: false, problem: (error as Error).message };
  }
  return { ok: true, project, graph: project.model.kind === 'file' ? (project.model.graph as unknown as ModelGraph) : undefined };
}

/** A file name for a project: its name, made safe, with the .shoal.json extension. */
export function projectFileName(name: string): string {
  const base = name.replace(/\.shoal\.json$/i, '').replace(/[^A-Za-z0-9._ -]+/g, '-').trim() || 'project';
  return `${base}${PROJECT_EXTENSION}`;
}
