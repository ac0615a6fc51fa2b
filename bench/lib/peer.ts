import { spawnSync } from 'node:child_process';

/** Debian's python3-torch lives under the system interpreter; the `python3` on PATH may be a pyenv one. */
export const SYSTEM_PYTHON = '/usr/bin/python3';

/**
 * Run a peer baseline script (another system's implementation of a benchmark workload) that prints
 * one JSON object as its last stdout line. Returns that object, or `{ error }` saying why there is no
 * number: a missing interpreter, a crash, or the peer's own `{ "error": ... }` (e.g. torch missing).
 */
export function runPeer(
  script: string,
  args: string[],
  options: { python?: string; env?: Record<string, string>; timeoutMs?: number } = {},
): Record<string, unknown> & { error?: string } {
  const python = options.python ?? SYSTEM_PYTHON;
  const res = spawnSync(python, [script, ...args], {
    encoding: 'utf8',
    env: { ...process.env, ...options.env },
    timeout: options.timeoutMs ?? 300_000,
    maxBuffer: 16 * 2 ** 20,
  });
  if (res.error) return { error: `${python} ${script}: ${res.error.message}` };
  const last = res.stdout.trim().split('\n').pop() ?? '';
  try {
    const parsed = JSON.parse(last) as Record<string, unknown> & { error?: string };
    if (res.status !== 0 && !parsed.error) parsed.error = `exited with ${res.status}`;
    return parsed;
  } catch {
    const why = (res.stderr.trim().split('\n').pop() ?? '').slice(0, 200);
    return { error: `${script} exited with ${res.status}, no JSON result${why ? `: ${why}` : ''}` };
  }
}
