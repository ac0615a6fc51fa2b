import { randomBytes } from 'node:crypto';
import type { Client } from 'ssh2';
import { runRemote } from './ssh/exec.js';
import { openSftp } from './ssh/sftp.js';
import { shQuote } from './shellQuote.js';

/** One file of what is uploaded to a host, at `relative` under ~/.shoal/<kind>/<hash>/. */
export interface PayloadFile {
  local: string;
  relative: string;
  bytes: number;
}

/** Files named by a hash of their names and contents: a host keeps one folder per distinct content. */
export interface Payload {
  hash: string;
  files: PayloadFile[];
  bytes: number;
}

export interface UploadResult {
  /** The payload's folder relative to the host's $HOME. */
  dir: string;
  /** False when the host already had this exact content. */
  uploaded: boolean;
}

/**
 * Put a payload in ~/.shoal/<kind>/<hash>/ unless it is there already: the agent build (`agent`), or a
 * job's model and data (`inputs`). Files go to a private temporary folder first, which is renamed into
 * place when complete: a folder named by its hash is always whole, even if an upload is cut off or two
 * deploys race (the loser discards its copy).
 */
export async function uploadPayload(client: Client, payload: Payload, kind: 'agent' | 'inputs', onProgress: (detail: string) => void): Promise<UploadResult> {
  const relDir = `.shoal/${kind}/${payload.hash}`;
  const result = { dir: relDir };
  // SFTP paths are absolute: the SFTP server starts in the account's home, which may differ from $HOME.
  const check = await runRemote(client, 'sh -s', { stdin: `mkdir -p "$HOME/.shoal/${kind}" && echo "home $HOME" && if [ -d "$HOME/${relDir}" ]; then echo present; fi\n`, timeoutMs: 30_000 });
  const home = /^home (\/.*)$/m.exec(check.stdout)?.[1];
  if (check.code !== 0 || !home) throw new Error(`could not create ~/.shoal/${kind} (exit ${check.code}): ${check.stderr.trim() || 'no output'}. Check the free space and permissions of the home directory.`);
  if (/^present$/m.test(check.stdout)) {
    onProgress(`${kind === 'agent' ? 'agent' : 'model and data'} ${payload.hash} already on the host`);
    return { ...result, uploaded: false };
  }

  const final = `${home}/${relDir}`;
  const tmp = `${home}/.shoal/${kind}/.upload-${payload.hash}-${randomBytes(4).toString('hex')}`;
  const sftp = await openSftp(client);
  try {
    await sftp.mkdir(tmp);
    // Every folder on the way to a file, parents first (a model's data may sit in data/val/).
    const dirs = new Set(payload.files.flatMap((f) => f.relative.split('/').slice(0, -1).map((_, i, parts) => parts.slice(0, i + 1).join('/'))));
    for (const dir of [...dirs].sort((a, b) => a.split('/').length - b.split('/').length)) await sftp.mkdir(`${tmp}/${dir}`);
    let done = 0;
    let reported = -1;
    const report = (bytes: number) => {
      // A line per tenth is enough for a person; finer steps would flood the log of a many-host deploy.
      const tenth = Math.floor((10 * bytes) / payload.bytes);
      if (tenth === reported) return;
      reported = tenth;
      onProgress(`uploading ${mib(bytes)} of ${mib(payload.bytes)} MiB (${tenth * 10}%)`);
    };
    for (const f of payload.files) {
      await sftp.put(f.local, `${tmp}/${f.relative}`, (sent) => report(done + sent));
      done += f.bytes;
      report(done);
    }
    try {
      await sftp.rename(tmp, final);
    } catch (err) {
      // Another deploy of the same build finished first: its folder is as good as ours.
      const raced = await runRemote(client, `test -d ${shQuote(final)}`);
      if (raced.code !== 0) throw err;
      await runRemote(client, `rm -rf ${shQuote(tmp)}`);
    }
    return { ...result, uploaded: true };
  } catch (err) {
    await runRemote(client, `rm -rf ${shQuote(tmp)}`).catch(() => {});
    throw new Error(`uploading the ${kind === 'agent' ? 'agent' : 'model and data'} to ${final} failed: ${(err as Error).message}`);
  } finally {
    sftp.end();
  }
}

const mib = (bytes: number) => (bytes / 1024 ** 2).toFixed(1);
