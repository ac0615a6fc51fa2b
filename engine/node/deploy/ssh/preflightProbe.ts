/**
 * One POSIX sh script that gathers every fact the preflight needs in a single SSH round trip, and the
 * parser of its output. Sections start with `@@name`; every probe tolerates a missing tool (macOS,
 * minimal containers), so a missing fact is reported for that fact, never as a failed host.
 */
import { NVIDIA_SMI_QUERY, parseNvidiaSmiCsv, type GpuFact } from '../../../cluster/nvidiaSmi.js';

/** The libraries tfjs-node-gpu's libtensorflow loads by soname (libcudart.so.11.0, libcudnn.so.8 …). */
const CUDA_LIB = 'lib(cudart|cublas|cudnn)\\.so[.0-9]*';

// The port probe runs only when Node is present: agents need it anyway, and it binds exactly as they will.
const PORT_PROBE =
  "const s=require('net').createServer();s.on('error',e=>{console.log('error '+e.code);process.exit(0)});" +
  "s.listen(0,'0.0.0.0',()=>{console.log('ok '+s.address().port);s.close()})";

/** What decides whether tfjs-node-gpu can run: the OS and CPU, the GPUs, and the CUDA libraries. */
const GPU_PROBE = [
  `echo @@gpu; if command -v nvidia-smi >/dev/null 2>&1; then ${NVIDIA_SMI_QUERY} 2>&1; echo "rc=$?"; fi`,
  // The CUDA and cuDNN libraries as TensorFlow's dlopen finds them: the ldconfig cache, then LD_LIBRARY_PATH.
  `echo @@cudalibs; ( (ldconfig -p 2>/dev/null || /sbin/ldconfig -p 2>/dev/null) | grep -Eo '${CUDA_LIB}' ; IFS=:; for d in $LD_LIBRARY_PATH; do ls "$d" 2>/dev/null | grep -Eo '^${CUDA_LIB}$'; done ) | sort -u`,
];

/** The devices alone, for this machine's own agents (LocalLauncher): its output parses with parseProbeOutput. */
export const DEVICE_PROBE_SCRIPT = ['echo @@uname; uname -sm 2>&1', 'echo @@ncpu; (getconf _NPROCESSORS_ONLN || nproc) 2>/dev/null', ...GPU_PROBE, 'echo @@end', ''].join('\n');

export const PROBE_SCRIPT = [
  'echo @@uname; uname -sm 2>&1',
  'echo @@ncpu; (getconf _NPROCESSORS_ONLN || nproc || sysctl -n hw.ncpu) 2>/dev/null',
  "echo @@cpumodel; (grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //' || sysctl -n machdep.cpu.brand_string) 2>/dev/null",
  "echo @@mem; if [ -r /proc/meminfo ]; then grep -E '^(MemTotal|MemAvailable):' /proc/meminfo; else echo \"MemTotal: $(( $(sysctl -n hw.memsize 2>/dev/null || echo 0) / 1024 )) kB\"; fi",
  'echo @@home; echo "$HOME"',
  'echo @@disk; df -Pk "$HOME" 2>/dev/null | tail -n 1',
  'echo @@node; if command -v node >/dev/null 2>&1; then command -v node; node --version 2>&1; fi',
  ...GPU_PROBE,
  `echo @@port; if command -v node >/dev/null 2>&1; then node -e "${PORT_PROBE}" 2>&1; fi`,
  'echo @@portrange; cat /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null',
  'echo @@end',
  '',
].join('\n');


export interface ProbeFacts {
  os?: string;
  arch?: string;
  cpus?: number;
  cpuModel?: string;
  memoryBytes?: number;
  memoryAvailableBytes?: number;
  home?: string;
  diskFreeBytes?: number;
  /** null: no `node` on the PATH of an SSH session. */
  node: { path: string; version: string } | null;
  /** Empty when there is no nvidia-smi: a host without GPUs is normal. */
  gpus: GpuFact[];
  /** Sonames of the CUDA runtime, cuBLAS and cuDNN libraries the dynamic loader finds (libcudart.so.11.0 …). */
  cudaLibs: string[];
  /** nvidia-smi present but failing (driver trouble): its output. */
  gpuError?: string;
  /** Port the host could bind (0.0.0.0:0), or why it could not; absent without Node. */
  port?: { ok: true; port: number } | { ok: false; error: string };
  portRange?: [number, number];
  /** The script did not reach its end (a shell that is not POSIX, a killed session). */
  complete: boolean;
}

export function parseProbeOutput(stdout: string): ProbeFacts {
  const sections = new Map<string, string[]>();
  let current: string[] | undefined;
  for (const line of stdout.split(/\r?\n/)) {
    const m = /^@@(\w+)$/.exec(line.trim());
    if (m) sections.set(m[1], (current = []));
    else if (current && line.trim()) current.push(line.trim());
  }
  const one = (name: string) => sections.get(name)?.[0];
  const facts: ProbeFacts = { node: null, gpus: [], cudaLibs: sections.get('cudalibs') ?? [], complete: sections.has('end') };

  const [os, arch] = (one('uname') ?? '').split(/\s+/);
  if (os) facts.os = os;
  if (arch) facts.arch = arch;
  const cpus = Number(one('ncpu'));
  if (Number.isInteger(cpus) && cpus > 0) facts.cpus = cpus;
  if (one('cpumodel')) facts.cpuModel = one('cpumodel')!.replace(/\s+/g, ' ');
  for (const line of sections.get('mem') ?? []) {
    const mm = /^(MemTotal|MemAvailable):\s+(\d+)\s*kB/.exec(line);
    if (mm && Number(mm[2]) > 0) facts[mm[1] === 'MemTotal' ? 'memoryBytes' : 'memoryAvailableBytes'] = Number(mm[2]) * 1024;
  }
  if (one('home')) facts.home = one('home');
  // df -P: Filesystem 1024-blocks Used Available Capacity Mounted-on
  const avail = Number((one('disk') ?? '').split(/\s+/)[3]);
  if (Number.isFinite(avail) && avail >= 0 && one('disk')) facts.diskFreeBytes = avail * 1024;
  const [nodePath, nodeVersion] = sections.get('node') ?? [];
  if (nodePath && nodeVersion) facts.node = { path: nodePath, version: nodeVersion };
  parseGpus(sections.get('gpu') ?? [], facts);
  const port = one('port');
  if (port?.startsWith('ok ')) facts.port = { ok: true, port: Number(port.slice(3)) };
  else if (port) facts.port = { ok: false, error: port.replace(/^error /, '') };
  const range = (one('portrange') ?? '').split(/\s+/).map(Number);
  if (range.length === 2 && range.every((n) => Number.isInteger(n) && n > 0)) facts.portRange = [range[0], range[1]];
  return facts;
}

/** nvidia-smi's CSV lines, then `rc=N` from the probe. */
function parseGpus(lines: string[], facts: ProbeFacts): void {
  if (lines.length === 0) return;
  const rc = lines[lines.length - 1].startsWith('rc=') ? Number(lines[lines.length - 1].slice(3)) : 0;
  const body = lines.filter((l) => !l.startsWith('rc='));
  if (rc !== 0) {
    facts.gpuError = body.join(' ').slice(0, 300) || `nvidia-smi exited with ${rc}`;
    return;
  }
  facts.gpus = parseNvidiaSmiCsv(body.join('\n'));
}
