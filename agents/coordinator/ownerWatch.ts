/**
 * The processes of an attached job (`shoal train`, the studio's Train) are children of their owner,
 * which names itself in SHOAL_OWNER_PID, and are meant to end with it. An owner that is killed
 * (SIGKILL, a crash, the OOM killer) cannot end them; without this they would train on, unseen, to
 * the last step. Its death shows as this process being re-parented (or, where processes are not
 * re-parented, as the pid being gone), checked once a second. Detached jobs have no owner to watch.
 */
export function whenOwnerGone(onGone: (owner: number) => void, env: NodeJS.ProcessEnv = process.env): () => void {
  const owner = Number(env.SHOAL_OWNER_PID);
  if (!Number.isInteger(owner) || owner <= 0) return () => {};
  const timer = setInterval(() => {
    if (process.ppid === owner && alive(owner)) return;
    clearInterval(timer);
    onGone(owner);
  }, 1000);
  timer.unref();
  return () => clearInterval(timer);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
