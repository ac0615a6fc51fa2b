import type { Connection } from '../../engine/wire/connection.js';
import { connectAuthenticated, type Hello } from '../../engine/wire/handshake.js';

/** An agent that lost its coordinator exits with this code to be started again by its supervisor (the restart policy). */
export { REJOIN_EXIT_CODE } from '../../engine/plan/restartPolicy.js';

/** How long a restarted agent keeps trying to reach a coordinator that is itself restarting. */
const REJOIN_WINDOW_MS = 90_000;

/**
 * Connect to the coordinator. A first start connects once (an error is immediate and clear); an agent
 * restarted to rejoin (SHOAL_RESTART > 0) retries every second while the coordinator comes back.
 */
export async function joinCoordinator(at: { host: string; port: number }, secret: string, hello: Hello): Promise<Connection> {
  const rejoining = Number(process.env.SHOAL_RESTART ?? 0) > 0;
  const deadline = Date.now() + (rejoining ? REJOIN_WINDOW_MS : 0);
  for (;;) {
    try {
      return await connectAuthenticated(at.host, at.port, secret, hello);
    } catch (err) {
      if (Date.now() >= deadline) {
        throw new Error(rejoining ? `the coordinator at ${at.host}:${at.port} did not come back within ${REJOIN_WINDOW_MS / 1000} s: ${(err as Error).message}` : (err as Error).message);
      }
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}
