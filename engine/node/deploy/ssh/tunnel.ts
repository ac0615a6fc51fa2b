import { createServer, type Socket } from 'node:net';
import type { Client } from 'ssh2';
import type { Forward } from '../launcher.js';

/**
 * `ssh -L` in-process: a listener on 127.0.0.1 (this machine only) whose every connection is carried
 * through the SSH session to `host:port` as the remote host sees it. The coordinator never listens on
 * a public interface for the studio; this is how the studio reaches it.
 */
export function forwardPort(client: Client, host: string, port: number, where: string): Promise<Forward> {
  const sockets = new Set<Socket>();
  const server = createServer((local) => {
    sockets.add(local);
    local.once('close', () => sockets.delete(local));
    local.pause();
    client.forwardOut('127.0.0.1', local.remotePort ?? 0, host, port, (err, remote) => {
      if (err) {
        process.stderr.write(`shoal: ${where} could not open a connection to ${host}:${port} (${err.message}); is the job still running?\n`);
        local.destroy();
        return;
      }
      local.pipe(remote).pipe(local);
      local.resume();
      remote.once('close', () => local.destroy());
      local.once('close', () => remote.close());
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address() as { port: number };
      resolve({
        host: '127.0.0.1',
        port: address.port,
        close: () => {
          server.close();
          sockets.forEach((s) => s.destroy());
        },
      });
    });
  });
}
