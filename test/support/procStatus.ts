import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/**
 * Facts about a real process read from /proc (Linux): its memory, and the TCP ports it listens on.
 * Reads fail (and return undefined / []) once the process has exited.
 */
export interface MemoryKiB {
  /** Resident set size now. */
  rss: number;
  /** Peak resident set size since the process started. */
  hwm: number;
}

export function memoryOf(pid: number): MemoryKiB | undefined {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  const memory = { rss: field('VmRSS'), hwm: field('VmHWM') };
  // A process that has exited but not been reaped (a zombie) has no memory lines.
  return Number.isNaN(memory.rss) || Number.isNaN(memory.hwm) ? undefined : memory;
}

/** Samples a process's memory every `everyMs` until stopped; keeps the largest figures seen. */
export function watchMemory(pid: number, everyMs = 50): { peak: MemoryKiB; stop: () => MemoryKiB } {
  const peak: MemoryKiB = { rss: 0, hwm: 0 };
  const sample = () => {
    const now = memoryOf(pid);
    if (!now) return;
    peak.rss = Math.max(peak.rss, now.rss);
    peak.hwm = Math.max(peak.hwm, now.hwm);
  };
  sample();
  const timer = setInterval(sample, everyMs);
  return {
    peak,
    stop: () => {
      sample();
      clearInterval(timer);
      return peak;
    },
  };
}

/** The TCP ports (IPv4 and IPv6) on which `pid` has a listening socket. */
export function listeningPorts(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const inode = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1];
      if (inode) inodes.add(inode);
    } catch {
      // closed while we looked
    }
  }
  const ports = new Set<number>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let lines: string[];
    try {
      lines = readFileSync(table, 'utf8').trim().split('\n').slice(1);
    } catch {
      continue;
    }
    for (const line of lines) {
      const f = line.trim().split(/\s+/);
      // local_address is HEX_IP:HEX_PORT; state 0A is LISTEN; the inode is the tenth field.
      if (f[3] === '0A' && inodes.has(f[9])) ports.add(parseInt(f[1].split(':')[1], 16));
    }
  }
  return [...ports];
}
