import type { Server } from 'node:net';
import type { Connection } from '../../engine/wire/connection.js';
import { connectAuthenticated, listenAuthenticated } from '../../engine/wire/handshake.js';
import type { StateReply } from '../../engine/protocol/controlWire.js';
import { PeerHelloSchema, type PeerHello } from '../../engine/protocol/handshake.js';
import { describeIssues } from '../../engine/protocol/describeIssues.js';

export interface PeerAddress {
  rank: number;
  host: string;
  port: number;
}

/**
 * Direct agent-to-agent links for activations, gradients and collectives. Every agent listens; for each
 * pair that must talk, the lower rank dials the higher one and says who it is after the handshake.
 */
export class PeerMesh {
  readonly links = new Map<number, Connection>();
  private server: Server | null = null;
  private pending = new Map<number, (conn: Connection) => void>();

  /** Who answers a state fetch of the named tensors on this listener (agentProcess sets it; by default it is refused). */
  onStateRequest: (conn: Connection, names: string[]) => void = (conn) => {
    conn.send({ type: 'stateError', message: 'no state is held here' } satisfies StateReply);
  };

  constructor(private readonly secret: string, private readonly log: (msg: string) => void) {}

  /** Start listening; returns the port peers should dial. */
  async listen(host: string): Promise<number> {
    this.server = await listenAuthenticated(
      host,
      0,
      this.secret,
      (conn, raw) => {
        const hello = PeerHelloSchema.safeParse(raw);
        if (!hello.success) {
          this.log(`refused a peer connection from ${conn.peer}: its hello is not one this agent understands (${describeIssues(hello.error.issues)})`);
          return conn.close();
        }
        // Not a link: a peer fetching state this agent holds (a resize hands state over peer to peer).
        if ('purpose' in hello.data) return this.onStateRequest(conn, hello.data.names);
        const rank = hello.data.rank;
        this.links.set(rank, conn);
        this.pending.get(rank)?.(conn);
        this.pending.delete(rank);
      },
      (peer, reason) => this.log(`refused a peer connection from ${peer}: ${reason}`),
    );
    const address = this.server.address();
    if (!address || typeof address === 'string') throw new Error('Peer listener has no TCP address.');
    return address.port;
  }

  /** Establish links to `needed` ranks: dial higher ranks, wait for lower ranks to dial in. */
  async connect(myRank: number, needed: PeerAddress[]): Promise<void> {
    await Promise.all(
      needed.map(async (peer) => {
        if (this.links.has(peer.rank)) return;
        if (peer.rank > myRank) {
          const conn = await connectAuthenticated(peer.host, peer.port, this.secret, { rank: myRank } satisfies PeerHello);
          this.links.set(peer.rank, conn);
        } else {
          await new Promise<Connection>((resolve) => this.pending.set(peer.rank, resolve));
        }
      }),
    );
  }

  link(rank: number): Connection {
    const conn = this.links.get(rank);
    if (!conn) throw new Error(`No connection to rank ${rank}.`);
    return conn;
  }

  close(): void {
    for (const conn of this.links.values()) conn.close();
    this.server?.close();
  }

  /**
   * Drop every link at once (not the polite half-close of close(), which waits for a peer that may
   * be stopped): every pending receive and collective fails now, naming the connection.
   */
  abort(): void {
    for (const conn of this.links.values()) conn.socket.destroy();
    this.server?.close();
  }
}
