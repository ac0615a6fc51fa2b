import type { Client, SFTPWrapper } from 'ssh2';

/** Promises over the few SFTP calls provisioning needs; errors name the remote path. */
export interface Sftp {
  mkdir(path: string): Promise<void>;
  /** Upload with progress (bytes of this file sent so far). fastPut: ~50× faster than a write stream. */
  put(local: string, remote: string, onBytes?: (sent: number) => void): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  end(): void;
}

export function openSftp(client: Client): Promise<Sftp> {
  return new Promise((resolve, reject) => {
    client.sftp((err, sftp: SFTPWrapper) => {
      if (err) return reject(new Error(`the host refused an SFTP session (${err.message}); enable "Subsystem sftp" in its sshd_config`));
      const call = (what: string, path: string, fn: (cb: (e: Error | null | undefined) => void) => void) =>
        new Promise<void>((ok, fail) => fn((e) => (e ? fail(new Error(`SFTP ${what} ${path}: ${e.message}`)) : ok())));
      resolve({
        mkdir: (path) => call('mkdir', path, (cb) => sftp.mkdir(path, cb)),
        put: (local, remote, onBytes) =>
          call('upload to', remote, (cb) => sftp.fastPut(local, remote, { mode: 0o644, step: (sent: number) => onBytes?.(sent) }, cb)),
        rename: (from, to) => call('rename', `${from} → ${to}`, (cb) => sftp.rename(from, to, cb)),
        end: () => sftp.end(),
      });
    });
  });
}
