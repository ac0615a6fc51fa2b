import { dirname, join } from 'node:path';
import { runsRoot } from './jobs/runStore.js';

/**
 * Where the models Shoal stores live: those the studio imported and the tfjs form of Keras files
 * (`<data dir>/models/<content hash>/model.json`), beside the runs.
 */
export function modelsRoot(): string {
  return join(dirname(runsRoot()), 'models');
}
