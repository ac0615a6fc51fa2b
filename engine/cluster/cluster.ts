/**
 * Where a job runs. This first version knows one kind of cluster: N agent processes on this machine.
 * `local:N` names it on the command line; the studio calls it "This machine".
 */
export interface LocalCluster {
  kind: 'local';
  name: string;
  agents: number;
}

export function localCluster(agents: number): LocalCluster {
  if (!Number.isInteger(agents) || agents < 1) throw new Error(`A local cluster needs at least 1 agent, got ${agents}.`);
  return { kind: 'local', name: 'This machine', agents };
}

/** Parse `local` or `local:N`; `defaultAgents` (the core count, at least 2) fills in a bare `local`. */
export function parseClusterName(text: string, defaultAgents: number): LocalCluster {
  const match = /^local(?::(\d+))?$/.exec(text.trim());
  if (!match) throw new Error(`Unknown cluster "${text}". Use local or local:N (N agent processes on this machine).`);
  return localCluster(match[1] ? Number(match[1]) : defaultAgents);
}
