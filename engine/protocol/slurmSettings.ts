import { z } from 'zod';

/**
 * A cluster reached through Slurm rather than a list of hosts: where its commands (sbatch, srun,
 * squeue, sinfo, scancel) run, and what every allocation asks for. Stored in clusters.json as the
 * cluster's `slurm`; none of it is secret.
 */

/** Characters Slurm itself allows in these names, so each can go to sbatch as one argument. */
const slurmWord = (what: string, example: string) =>
  z
    .string()
    .trim()
    .min(1, `give the ${what}, e.g. ${example}`)
    .max(200, `the ${what} is at most 200 characters`)
    .regex(/^[A-Za-z0-9][A-Za-z0-9._:,|&*=+-]*$/, `the ${what} uses letters, digits and . _ : , | & * = + -, e.g. ${example}`);

export const SlurmSettingsSchema = z.strictObject({
  /**
   * Where Slurm's commands run: `local`, this machine (it is a login node), or `ssh`, the cluster's one
   * host (its login node, reached with everything an SSH host has: host keys, ProxyJump, ssh-agent).
   */
  login: z.enum(['local', 'ssh'], { message: 'the login node is "local" (this machine) or "ssh" (the cluster\'s login host)' }),
  partition: slurmWord('partition', 'gpu').optional(),
  account: slurmWord('account', 'proj123').optional(),
  /** Generic resources per node, as sbatch --gres takes them: `gpu:4`. */
  gres: z
    .string()
    .trim()
    .regex(/^gpu(:[A-Za-z0-9_-]+)?:[1-9]\d{0,2}$/, 'give GPUs per node as gpu:N or gpu:TYPE:N, e.g. gpu:4')
    .optional(),
  /** The allocation's time limit, as sbatch --time takes it. */
  time: z
    .string()
    .trim()
    .regex(/^(\d+-)?\d{1,3}(:\d{2}){0,2}$/, 'give the time limit as [D-]HH:MM:SS, MM or HH:MM:SS, e.g. 02:00:00')
    .optional(),
  /** Node features the allocation must have, as sbatch --constraint takes them: `a100&ib`. */
  constraint: slurmWord('constraint', 'a100').optional(),
});
export type SlurmSettings = z.infer<typeof SlurmSettingsSchema>;
