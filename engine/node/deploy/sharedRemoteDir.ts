import { hostFolder, remoteDirWord } from './remotePaths.js';

/**
 * Which hosts share a remote directory (one NFS home mounted on every node): each host writes a marker
 * named after itself in a folder named for this deploy, then every host looks, by name, for the
 * others' markers. Looking a name up (rather than listing the folder) goes to the file server on NFS,
 * where a listing may come from a client's attribute cache. Hosts that see each other's markers share
 * the folder: the agent and the model are uploaded there once, by the first of them.
 */

const folder = (remoteDir: string, nonce: string) => `${remoteDirWord(remoteDir)}/.share-${nonce}`;

/** Create the remote directory and this host's marker; prints `marked`. */
export function markScript(remoteDir: string, nonce: string, host: string): string {
  return `D=${folder(remoteDir, nonce)}; mkdir -p "$D" && echo "${nonce}" > "$D/${hostFolder(host)}" && echo marked\n`;
}

/** Prints `seen <alias index>` for each other host whose marker this host sees. */
export function seenScript(remoteDir: string, nonce: string, others: readonly string[]): string {
  return [`D=${folder(remoteDir, nonce)}`, ...others.map((h, i) => `[ -f "$D/${hostFolder(h)}" ] && echo "seen ${i}"`), 'true', ''].join('\n');
}

export function parseSeen(stdout: string, others: readonly string[]): string[] {
  return [...stdout.matchAll(/^seen (\d+)$/gm)].map((m) => others[Number(m[1])]).filter((h): h is string => h !== undefined);
}

export function cleanupScript(remoteDir: string, nonce: string): string {
  return `rm -rf ${folder(remoteDir, nonce)}\n`;
}

/**
 * Hosts grouped by shared folder (connected through "sees the marker of", either way), each group in
 * the hosts' order, groups in the order of their first host. A host alone is a group of one.
 */
export function shareGroups(hosts: readonly string[], seen: ReadonlyMap<string, readonly string[]>): string[][] {
  const parent = new Map(hosts.map((h) => [h, h]));
  const find = (h: string): string => {
    let r = h;
    while (parent.get(r) !== r) r = parent.get(r)!;
    return r;
  };
  for (const [h, others] of seen) for (const o of others) if (parent.has(h) && parent.has(o)) parent.set(find(o), find(h));
  const groups = new Map<string, string[]>();
  for (const h of hosts) {
    const root = find(h);
    groups.set(root, [...(groups.get(root) ?? []), h]);
  }
  return [...groups.values()];
}
