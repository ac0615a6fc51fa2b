import { UsageError } from './usage.js';

/** A `shoal cluster …` command line that is wrong as typed: the command prints its usage and exits 2. */
export { UsageError };

/** A cluster's name as typed on the command line, checked: letters, digits, dot, dash and underscore. */
export function clusterName(name: string | undefined): string {
  if (!name) throw new UsageError('A cluster name is required.');
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name)) throw new UsageError(`"${name}" is not a cluster name: use letters, digits, dot, dash and underscore.`);
  return name;
}
