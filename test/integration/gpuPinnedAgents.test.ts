import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runDeployCommand } from '../../engine/node/commands/deploy.js';
import { SshLauncher } from '../../engine/node/deploy/sshLauncher.js';
import { zooModel } from '../../engine/model/zoo.js';
import { presetPlan } from '../../engine/plan/presets.js';
import type { JobEvent } from '../../engine/protocol/events.js';
import { MACHINES, standInUuid, writeGpuStandIns } from '../support/gpuStandIns.js';
import { hostHome, removeHomes, useTempHome } from '../support/homes.js';
import { hostFor, makeUserKey, startSshd, stopAllSshd } from '../support/sshd.js';
import { runCommand as run, jsonLines } from '../support/commandRun.js';

/**
 * GPU hosts without a GPU: stand-ins for nvidia-smi and ldconfig (test/support/gpuStandIns.ts) print
 * what the servers print; the agents, the shell that starts them and the sshd are real.
 */
let env: ReturnType<typeof useTempHome>;
const path = process.env.PATH;
const homes: string[] = [];

beforeAll(() => {
  env = useTempHome();
  process.env.SHOAL_DATA_DIR = join(env.home, 'data');
});

afterAll(async () => {
  process.env.PATH = path;
  delete process.env.SHOAL_DATA_DIR;
  await stopAllSshd();
  removeHomes(homes);
  env?.restore();
});

describe('agents on an 8× A100 server (this machine with stand-ins on its PATH)', () => {
  test('each agent starts pinned to the GPU the plan gives its rank, memory growth on, and reports that GPU and why its backend', async () => {
    const log = join(env.home, 'nvidia-smi.log');
    process.env.PATH = `${writeGpuStandIns(join(env.home, 'dgx-bin'), MACHINES.dgxA100, log)}:${path}`;
    const mlp = zooModel('mlp');
    const base = presetPlan(mlp, 'pp1-dp2', { globalBatch: 32 });
    // Rank 0 on GPU 6, rank 1 on GPU 3: not the agents' start or join order.
    const planFile = join(env.home, 'plan.json');
    writeFileSync(planFile, JSON.stringify({ ...base, stages: [{ ...base.stages[0], devices: [6, 3] }] }));
    try {
      const d = await run(runDeployCommand, '--cluster', 'local', '--model', 'mlp', '--plan-file', planFile, '--steps', '2', '--allow-cpu-fallback', '--json');
      expect(d.err).not.toContain('shoal deploy:');
      expect(d.code).toBe(0);
      const agents = jsonLines<JobEvent>(d.out).filter((e): e is Extract<JobEvent, { type: 'agent' }> => e.type === 'agent');
      expect(agents.map((a) => [a.rank, a.device?.gpu?.index, a.device?.gpu?.uuid, a.device?.cudaVisibleDevices])).toEqual([
        [0, 6, standInUuid(6), '6'],
        [1, 3, standInUuid(3), '3'],
      ]);
      for (const a of agents) {
        // No tfjs-node-gpu here: allowed to, the agent trains on the CPU and its status says why.
        expect(a.device).toMatchObject({ kind: 'cpu', backend: 'wasm', gpu: { name: 'NVIDIA A100-SXM4-80GB', memoryBytes: 81920 * 2 ** 20 } });
        expect(a.device!.reason).toContain('tensorflow-gpu skipped: @tensorflow/tfjs-node-gpu not installed');
      }
      // What each agent's own process saw when it asked nvidia-smi for its device.
      const calls = readFileSync(log, 'utf8');
      expect(calls).toMatch(/-i 6 \| CUDA_VISIBLE_DEVICES=6 TF_FORCE_GPU_ALLOW_GROWTH=true$/m);
      expect(calls).toMatch(/-i 3 \| CUDA_VISIBLE_DEVICES=3 TF_FORCE_GPU_ALLOW_GROWTH=true$/m);
    } finally {
      process.env.PATH = path;
    }
  });
});

describe('SSH hosts that cannot run tfjs-node-gpu (real sshd, stand-ins on their PATH)', () => {
  test('no driver and arm64 are each refused in one line, and prepared for the CPU with --allow-cpu-fallback', async () => {
    const key = makeUserKey(join(env.home, 'keys'), 'id_gpu');
    const machines = { nodriver: MACHINES.noDriver, grace: MACHINES.arm64 };
    const hosts = await Promise.all(
      Object.entries(machines).map(async ([alias, machine], i) => {
        const home = hostHome(alias);
        homes.push(home);
        const server = await startSshd({ address: `127.0.0.${i + 6}`, authorizedKeys: [key.publicKey], home, pathPrefix: [writeGpuStandIns(join(home, 'stand-ins'), machine)] });
        return hostFor(server, alias, key.path);
      }),
    );
    const refused = new SshLauncher(hosts, { trustRequest: () => true });
    const [nodriver, grace] = await refused.prepare();
    refused.close();
    expect(nodriver.ok).toBe(false);
    expect(nodriver.error).toMatch(/gpu-runtime: nvidia-smi is installed but fails \(NVIDIA-SMI has failed .*\): install or reload the NVIDIA driver .* Or deploy with --allow-cpu-fallback/);
    expect(grace.error).toContain('gpu-runtime: 1 GPU on aarch64, but tfjs-node-gpu 4.22 ships libtensorflow 2.9.1 for linux-x86_64 only');

    const events: string[] = [];
    const allowed = new SshLauncher(hosts, { trustRequest: () => true, allowCpuFallback: true });
    const prepared = await allowed.prepare((e) => events.push(`${e.target} ${e.step} ${e.status} ${e.detail}`));
    allowed.close();
    expect(prepared.map((p) => [p.ok, p.gpus])).toEqual([
      [true, []],
      [true, []],
    ]);
    expect(events).toContainEqual(expect.stringMatching(/^grace gpu-runtime skipped GPUs not usable, agents use the CPU \(--allow-cpu-fallback\): 1 GPU on aarch64/));
  });
});
