import type { Client } from 'ssh2';
import { digestScript, parseDigestLines } from './fileDigest.js';
import { runRemote } from './ssh/exec.js';
import type { HostData } from './uploadPayload.js';

const REASON: Record<string, string> = {
  ENOENT: 'does not exist',
  EACCES: 'is not readable by this account',
  EPERM: 'is not readable by this account',
  EISDIR: 'is a folder, not a file',
};

/**
 * Data that should already sit at the same path on this host (`location: "hosts"`): every file the
 * job reads exists, is readable, and has this machine's size and digest (fileDigest.ts: its first and
 * last MiB). Throws with each file that is not so (the first few, and how many more) and the fix;
 * resolves to a line for the progress log.
 */
export async function checkHostData(client: Client, data: HostData): Promise<string> {
  const out = await runRemote(client, 'node -', { stdin: digestScript(data.dir, data.files.map((f) => f.relative)), timeoutMs: 600_000 });
  const theirs = parseDigestLines(out.stdout);
  if (theirs.size === 0) throw new Error(`could not read the data at ${data.dir} on the host (node - exited ${out.code}): ${out.stderr.trim().slice(0, 300) || 'no output'}`);
  const problems: string[] = [];
  for (const f of data.files) {
    const path = f.relative ? `${data.dir}/${f.relative}` : data.dir;
    const t = theirs.get(f.relative);
    if (!t) problems.push(`${path} was not checked (the check stopped early)`);
    else if ('error' in t) problems.push(`${path} ${REASON[t.error] ?? `cannot be read (${t.error})`}`);
    else if (t.bytes !== f.bytes) problems.push(`${path} has ${t.bytes} bytes, but ${f.bytes} here`);
    else if (t.digest !== f.digest) problems.push(`${path} has the same size as here but different content (first or last MiB)`);
  }
  const bytes = data.files.reduce((n, f) => n + f.bytes, 0);
  if (problems.length === 0) return `data at ${data.dir} on the host: ${data.files.length} file(s), ${(bytes / 1024 ** 2).toFixed(1)} MiB, the same as here; nothing to upload`;
  const shown = problems.slice(0, 5).join('; ') + (problems.length > 5 ? `; and ${problems.length - 5} more` : '');
  throw new Error(`the dataset is meant to be at the same path on every host (location "hosts"), but on this host ${shown}. Copy the data there (the same files as on this machine), or drop location "hosts" / --data-on-hosts to have Shoal upload it.`);
}
