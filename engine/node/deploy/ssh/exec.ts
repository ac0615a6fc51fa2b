import type { Client } from 'ssh2';

export interface RemoteResult {
  /** Exit status; null when the command died by a signal or the channel closed without one. */
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Run `command` on the host (through the user's login shell, as `ssh host command` would), optionally
 * writing `stdin` to it — scripts and secrets go that way, never on the command line, where `ps` shows them.
 */
export function runRemote(
  client: Client,
  command: string,
  options: { stdin?: string; timeoutMs?: number; /** Each line of stdout and stderr as it arrives (long installs). */ onLine?: (line: string) => void } = {},
): Promise<RemoteResult> {
  return new Promise((resolve, reject) => {
    client.exec(command, (err, channel) => {
      if (err) return reject(new Error(`could not start "${command}" on the host: ${err.message}`));
      const out: Buffer[] = [];
      const errOut: Buffer[] = [];
      let code: number | null = null;
      const timer =
        options.timeoutMs === undefined
          ? undefined
          : setTimeout(() => {
              channel.close();
              reject(new Error(`"${command}" did not finish within ${Math.round(options.timeoutMs! / 1000)} s on the host.`));
            }, options.timeoutMs);
      const lines = lineSplitter(options.onLine);
      channel.on('data', (d: Buffer) => (out.push(d), lines(d)));
      channel.stderr.on('data', (d: Buffer) => (errOut.push(d), lines(d)));
      channel.on('exit', (c: number | null) => {
        code = typeof c === 'number' ? c : null;
      });
      channel.on('close', () => {
        clearTimeout(timer);
        resolve({ code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(errOut).toString('utf8') });
      });
      channel.end(options.stdin ?? '');
    });
  });
}

function lineSplitter(onLine?: (line: string) => void): (d: Buffer) => void {
  if (!onLine) return () => {};
  let rest = '';
  return (d) => {
    const parts = (rest + d.toString('utf8')).split(/\r?\n/);
    rest = parts.pop() ?? '';
    for (const p of parts) if (p.trim()) onLine(p);
  };
}
