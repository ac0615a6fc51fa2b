import { execFileSync } from 'node:child_process';
import { cpus } from 'node:os';
import { NVIDIA_SMI_QUERY, parseNvidiaSmiCsv, type GpuFact } from '../../engine/cluster/nvidiaSmi.js';
import type { AgentDevice } from '../../engine/protocol/events.js';
import type { SelectedBackend } from './selectBackend.js';

/**
 * The device an agent runs on, as it reports it in its status: the GPU its CUDA_VISIBLE_DEVICES names
 * (asked of nvidia-smi here, on the agent's own host, so what is reported is what this process sees;
 * the deploy's preflight listing when nvidia-smi cannot say), or this host's CPU; with the backend
 * and why that backend (selectBackend's detail).
 */
export function agentDevice(backend: SelectedBackend, planned?: GpuFact): AgentDevice {
  const visible = process.env.CUDA_VISIBLE_DEVICES?.trim();
  const gpu = visible ? (visibleGpu(visible) ?? planned) : undefined;
  const cpu = `${cpus().length} × ${cpus()[0]?.model.replace(/\s+/g, ' ').trim() ?? 'unknown CPU'}`;
  const onGpu = backend.name === 'tensorflow-gpu';
  return {
    kind: onGpu ? 'gpu' : 'cpu',
    name: onGpu && gpu ? gpu.name : cpu,
    ...(gpu ? { gpu: { index: gpu.index, name: gpu.name, memoryBytes: gpu.memoryBytes, uuid: gpu.uuid } } : {}),
    ...(visible !== undefined ? { cudaVisibleDevices: visible } : {}),
    backend: backend.name,
    reason: backend.detail,
  };
}

function visibleGpu(visible: string): GpuFact | undefined {
  try {
    const out = execFileSync('nvidia-smi', [...NVIDIA_SMI_QUERY.split(' ').slice(1), '-i', visible.split(',')[0]], { encoding: 'utf8', timeout: 10_000, stdio: ['ignore', 'pipe', 'ignore'] });
    return parseNvidiaSmiCsv(out)[0];
  } catch {
    return undefined;
  }
}
