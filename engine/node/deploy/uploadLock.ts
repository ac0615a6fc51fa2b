import type { SftpFiles } from './sftpFiles.js';

/** How often the holder shows it is alive, and how long an unchanged lock is trusted. */
const REFRESH_MS = 5_000;
const STALE_MS = 30_000;

export interface UploadLock {
  release(): Promise<void>;
}

/**
 * One uploader per payload and host at a time: the payload's staging folder is shared (that is what
 * makes an upload resumable), so two deploys of the same content to one host — or two "hosts" that
 * share a home directory — must not write into it together. The lock is a folder (mkdir is atomic over
 * SFTP); its holder touches it every few seconds while it holds it. A waiter takes it over when its mtime has not moved
 * for 30 s of the waiter's own time (a deploy that was killed), so no clocks are compared across
 * machines. Resolves 'done' instead when the payload appeared while waiting.
 */
export async function acquireUploadLock(sftp: SftpFiles, lockDir: string, done: () => Promise<boolean>, onWait: () => void): Promise<UploadLock | 'done'> {
  let seen: { mtime: number; since: number } | undefined;
  let told = false;
  let vanished = 0;
  for (;;) {
    try {
      await sftp.mkdir(lockDir);
      return holder(sftp, lockDir);
    } catch (err) {
      const st = await sftp.stat(lockDir);
      // Released between our mkdir and stat: try again at once — unless mkdir fails for another reason (permissions).
      if (!st && ++vanished < 5) continue;
      if (!st?.isDirectory) throw err;
    }
    if (await done()) return 'done';
    const st = await sftp.stat(lockDir);
    if (!st) continue;
    const now = Date.now();
    if (!seen || seen.mtime !== st.mtime) seen = { mtime: st.mtime, since: now };
    else if (now - seen.since > STALE_MS) {
      // Its holder stopped touching it: a deploy that died. Take the lock over.
      await sftp.rmdir(lockDir).catch(() => {});
      seen = undefined;
      continue;
    }
    if (!told) onWait();
    told = true;
    await new Promise((r) => setTimeout(r, 1_000));
  }
}

/** While held, the lock's mtime is touched on a timer, whatever the upload is doing (sending, verifying, waiting for another payload). */
function holder(sftp: SftpFiles, lockDir: string): UploadLock {
  const timer = setInterval(() => void sftp.touch(lockDir).catch(() => {}), REFRESH_MS);
  timer.unref();
  let released = false;
  return {
    async release() {
      clearInterval(timer);
      if (released) return;
      released = true;
      await sftp.rmdir(lockDir).catch(() => {});
    },
  };
}
