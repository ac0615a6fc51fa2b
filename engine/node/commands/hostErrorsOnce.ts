import type { Launcher } from '../deploy/launcher.js';

/**
 * `shoal jobs` asks each job's hosts about it; a host that cannot be reached (or whose host key
 * changed: a five-line warning) fails the same way for every job on it. This launcher keeps each
 * host's message once in `said` (alias → message) and gives the job's summary a short reference to
 * it, so the command prints it once per host.
 */
export function errorsOncePerHost(launcher: Launcher, said: Map<string, string>): Launcher {
  return new Proxy(launcher, {
    get(target, prop, receiver) {
      if (prop !== 'status') return Reflect.get(target, prop, receiver) as unknown;
      return async (jobId: string) =>
        (await target.status(jobId)).map((s) => {
          if (s.ok || !s.error) return s;
          if (!said.has(s.target)) said.set(s.target, s.error);
          return { ...s, error: `${s.target} (its message is printed once, on stderr)` };
        });
    },
  });
}
