/**
 * What `nvidia-smi --query-gpu=index,name,memory.total,uuid,driver_version --format=csv,noheader`
 * prints, one GPU a line (`0, NVIDIA A100-SXM4-80GB, 81920 MiB, GPU-4f1e…, 535.104.05`). Pure: the
 * preflight parses a host's output with it, and an agent its own device's.
 */
export const NVIDIA_SMI_QUERY = 'nvidia-smi --query-gpu=index,name,memory.total,uuid,driver_version --format=csv,noheader';

export interface GpuFact {
  /** nvidia-smi's index: the number CUDA_VISIBLE_DEVICES takes. */
  index: number;
  name: string;
  memoryBytes: number;
  uuid: string;
  driver: string;
}

/** The GPUs of the lines that parse; a line that does not (a warning nvidia-smi printed) is left out. */
export function parseNvidiaSmiCsv(text: string): GpuFact[] {
  const gpus: GpuFact[] = [];
  for (const line of text.split(/\r?\n/)) {
    // A GPU's name never holds a comma; the fields are separated by ", ".
    const m = /^\s*(\d+)\s*,\s*([^,]+?)\s*,\s*(\d+)\s*MiB\s*,\s*(\S+)\s*,\s*(\S+)\s*$/.exec(line);
    if (m) gpus.push({ index: Number(m[1]), name: m[2], memoryBytes: Number(m[3]) * 1024 * 1024, uuid: m[4], driver: m[5] });
  }
  return gpus;
}
