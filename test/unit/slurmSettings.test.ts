import { describe, expect, test } from 'vitest';
import { whenDeadline } from '../../agents/coordinator/deadline.js';
import { SlurmSettingsSchema } from '../../engine/protocol/slurmSettings.js';
import { sbatchArgs } from '../../engine/node/deploy/slurm/allocation.js';
import { queueLine } from '../../engine/node/deploy/slurm/slurmLauncher.js';

describe('Slurm settings', () => {
  test('every option goes to sbatch as one argument; what Slurm would misread is refused with an example', () => {
    const s = SlurmSettingsSchema.parse({ login: 'local', partition: 'gpu', account: 'proj1', gres: 'gpu:a100:4', time: '1-02:00:00', constraint: 'a100&ib' });
    expect(sbatchArgs(s, { nodes: 2, tasksPerNode: 1, name: 'shoal' })).toEqual([
      '--parsable', '--job-name=shoal', '--nodes=2', '--ntasks-per-node=1', '--partition=gpu', '--account=proj1', '--gres=gpu:a100:4',
      '--time=1-02:00:00', '--constraint=a100&ib', '--no-requeue', '--no-kill', '--output=/dev/null', '--wrap=exec sleep infinity',
    ]);
    const bad = (v: Record<string, string>) => SlurmSettingsSchema.safeParse({ login: 'local', ...v }).error?.issues[0].message;
    expect(bad({ gres: '4' })).toBe('give GPUs per node as gpu:N or gpu:TYPE:N, e.g. gpu:4');
    expect(bad({ time: '2h' })).toMatch(/^give the time limit as \[D-\]HH:MM:SS/);
    expect(bad({ partition: 'gpu; rm -rf ~' })).toMatch(/^the partition uses letters, digits/);
    expect(SlurmSettingsSchema.safeParse({ login: 'login1' }).error?.issues[0].message).toMatch(/"local" \(this machine\) or "ssh"/);
  });

  test('the queue line says the state, the reason and the time waited', () => {
    expect(queueLine({ allocation: '42', state: 'PENDING', reason: 'Priority', elapsed: '1:05' })).toBe('allocation 42 PENDING (Priority), waiting 1:05');
    expect(queueLine({ allocation: '42', state: 'CONFIGURING', reason: 'None', elapsed: '0:01' })).toBe('allocation 42 CONFIGURING, waiting 0:01');
  });

  test('a deadline already passed is called at once; none, never', () => {
    const calls: string[] = [];
    whenDeadline(1000, () => calls.push('past'), () => 2000);
    whenDeadline(undefined, () => calls.push('none'));
    const cancel = whenDeadline(Number.MAX_SAFE_INTEGER, () => calls.push('far'));
    cancel();
    expect(calls).toEqual(['past']);
  });
});
