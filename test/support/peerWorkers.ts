import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

/**
 * Run `procs` copies of a worker script (each `worker <rank> <procs> <scenario>`) as real processes
 * that form a peer mesh: each prints its listening port as a first JSON line, receives every peer's
 * address on stdin, and prints one JSON result line. Returns the results in rank order; a worker that
 * exits without one yields `missing`.
 */
export async function runPeerWorkers<T>(worker: string, procs: number, scenario: string, missing: T): Promise<T[]> {
  const children = Array.from({ length: procs }, (_, rank) =>
    spawn(process.execPath, ['--import', 'tsx', worker, String(rank), String(procs), scenario], { stdio: ['pipe', 'pipe', 'inherit'] }),
  );
  const lines = children.map((child) => {
    const queue: string[] = [];
    const waiting: Array<(l: string | null) => void> = [];
    createInterface({ input: child.stdout! }).on('line', (l) => (waiting.length ? waiting.shift()!(l) : queue.push(l)));
    child.once('exit', () => waiting.splice(0).forEach((w) => w(null)));
    return () => new Promise<string | null>((r) => (queue.length ? r(queue.shift()!) : waiting.push(r)));
  });
  const ports = await Promise.all(lines.map(async (next) => (JSON.parse((await next())!) as { port: number }).port));
  const peers = JSON.stringify(ports.map((port, rank) => ({ rank, host: '127.0.0.1', port })));
  children.forEach((c) => c.stdin!.write(`${peers}\n`));
  const results = await Promise.all(lines.map(async (next) => {
    const line = await next();
    return line === null ? missing : (JSON.parse(line) as T);
  }));
  // Every rank has reported: a worker still waiting to be released (stdin closed) may go now.
  children.forEach((c) => c.stdin!.end());
  await Promise.all(children.map((c) => (c.exitCode !== null ? null : new Promise((r) => c.once('exit', r)))));
  return results;
}
