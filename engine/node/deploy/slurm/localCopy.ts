import { copyFileSync, existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { hostPath } from '../../../wire/hostPath.js';
import { homeRelative, remotePath } from '../remotePaths.js';
import type { Payload } from '../uploadPayload.js';

/** Written last: the folder is whole (the same marker as an SFTP upload's). */
const MARKER = '.shoal-complete';

/**
 * Put a payload in <remote dir>/<kind>/<hash>/ on this machine, the login node: its home is the one
 * the cluster's nodes mount, so one copy serves every node (the launcher then checks each node sees
 * it). A folder already complete is kept; a copy goes to a staging folder renamed into place, so a
 * cut copy is never taken for a whole one. Returns the folder as startScript takes it.
 */
export function copyPayloadHere(payload: Payload, kind: 'agent' | 'inputs', remoteDir: string): { dir: string; copied: boolean } {
  const dir = hostPath(remotePath(remoteDir, kind, payload.hash));
  const shown = homeRelative(remoteDir, kind, payload.hash);
  if (existsSync(join(dir, MARKER))) return { dir: shown, copied: false };
  const staging = `${dir}.upload-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  try {
    for (const f of payload.files) {
      const to = join(staging, f.relative);
      mkdirSync(dirname(to), { recursive: true });
      copyFileSync(f.local, to);
    }
    writeFileSync(join(staging, MARKER), payload.hash + '\n');
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dirname(dir), { recursive: true });
    renameSync(staging, dir);
  } catch (err) {
    rmSync(staging, { recursive: true, force: true });
    throw new Error(`Copying the ${kind === 'agent' ? 'agent build' : "job's model and data"} into ${dir} failed: ${(err as Error).message}`);
  }
  return { dir: shown, copied: true };
}
