import type { SlurmSettings } from '../../../protocol/slurmSettings.js';
import type { SshHost } from '../../hosts/host.js';

/** What a deployed job's record keeps of its Slurm allocation, to find its processes again. */
export interface SlurmJobRecord {
  settings: SlurmSettings;
  /** Slurm's job id of the allocation. */
  allocation: string;
  /** Its nodes, head first, each with the address the others reach it by. */
  nodes: Array<{ alias: string; peerAddress: string }>;
  /** When Slurm ends the allocation (its time limit), absent when it has none. */
  endTime?: string;
  /** The login host, when Slurm's commands run there over SSH. */
  login?: SshHost;
}
