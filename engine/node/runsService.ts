import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { JobState } from '../protocol/events.js';
import { DeleteRunOptionsSchema, RunIdSchema } from '../protocol/runs.js';
import type { StudioApi } from '../protocol/studioApi.js';
import { exportWeights } from './export/exportWeights.js';
import { deleteRun } from './jobs/runDelete.js';
import { listRuns, readRun, runFolder } from './jobs/runHistory.js';
import { updateRunMeta } from './jobs/runMeta.js';

type RunsApi = Pick<StudioApi, 'listRuns' | 'getRun' | 'exportRunWeights' | 'exportedWeightFiles' | 'updateRun' | 'deleteRun'>;

/** Largest export handed to the browser as a download (a 10,000-class classifier is ~20 MB). */
const MAX_DOWNLOAD_BYTES = 64 * 1024 * 1024;

function runId(value: unknown): string {
  const parsed = RunIdSchema.safeParse(value);
  if (!parsed.success) throw new Error(`"${String(value)}" is not a run id: ${parsed.error.issues[0]?.message ?? 'bad value'}.`);
  return parsed.data;
}

/**
 * The Runs part of the StudioApi: the history on disk (run folders under the runs root), one run's
 * curves and predictions, and its weights exported in tfjs format. `live` maps the run ids this studio
 * is running to their state, since a running job's folder has no final event yet.
 */
export function runsService(live: () => Map<string, JobState>): RunsApi {
  return {
    async listRuns() {
      return listRuns(live());
    },
    async getRun(id) {
      const checked = runId(id);
      return readRun(checked, live().get(checked));
    },
    async updateRun(id, update) {
      const checked = runId(id);
      updateRunMeta(runFolder(checked), update);
      return readRun(checked, live().get(checked)).summary;
    },
    async deleteRun(id, options) {
      const checked = runId(id);
      const parsed = DeleteRunOptionsSchema.safeParse(options ?? {});
      if (!parsed.success) throw new Error(`The delete options are malformed: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(options)'}: ${i.message}`).join('; ')}`);
      const state = live().get(checked);
      return deleteRun(checked, { permanently: parsed.data.permanently, running: state === 'running' || state === 'starting' });
    },
    async exportRunWeights(id) {
      return exportWeights(runFolder(runId(id)));
    },
    async exportedWeightFiles(id) {
      const dir = runFolder(runId(id));
      const exported = exportWeights(dir);
      if (exported.bytes > MAX_DOWNLOAD_BYTES) throw new Error(`The export is ${(exported.bytes / 1e6).toFixed(0)} MB, too large to download through the browser; copy it from ${exported.dir}.`);
      return exported.files.map((name) => ({ name, base64: readFileSync(join(exported.dir, name)).toString('base64') }));
    },
  };
}
