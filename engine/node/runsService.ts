import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { JobState } from '../protocol/events.js';
import type { StudioApi } from '../protocol/studioApi.js';
import { exportWeights } from './export/exportWeights.js';
import { deleteRun } from './jobs/runDelete.js';
import { listRuns, readRun, runFolder } from './jobs/runHistory.js';
import { updateRunMeta } from './jobs/runMeta.js';

type RunsApi = Pick<StudioApi, 'listRuns' | 'getRun' | 'exportRunWeights' | 'exportedWeightFiles' | 'updateRun' | 'deleteRun'>;

/** Largest export handed to the browser as a download (a 10,000-class classifier is ~20 MB). */
const MAX_DOWNLOAD_BYTES = 64 * 1024 * 1024;

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
      return readRun(id, live().get(id));
    },
    async updateRun(id, update) {
      updateRunMeta(runFolder(id), update);
      return readRun(id, live().get(id)).summary;
    },
    async deleteRun(id, options) {
      const state = live().get(id);
      return deleteRun(id, { permanently: options?.permanently, running: state === 'running' || state === 'starting' });
    },
    async exportRunWeights(id) {
      return exportWeights(runFolder(id));
    },
    async exportedWeightFiles(id) {
      const dir = runFolder(id);
      const exported = exportWeights(dir);
      if (exported.bytes > MAX_DOWNLOAD_BYTES) throw new Error(`The export is ${(exported.bytes / 1e6).toFixed(0)} MB, too large to download through the browser; copy it from ${exported.dir}.`);
      return exported.files.map((name) => ({ name, base64: readFileSync(join(exported.dir, name)).toString('base64') }));
    },
  };
}
