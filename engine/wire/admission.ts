/**
 * How many sockets may be in their handshake at once. Before a peer has proved the job secret it costs
 * a socket, a timer and a few KiB (frame.ts, connection.ts); these caps bound how many such peers a
 * listener keeps, in all and per source address, so a flood of connections from anywhere the listener
 * is reachable costs a bounded amount of memory. Like sshd's MaxStartups, a connection over a cap is
 * refused at once; a real dialler is told it was busy and tries again (handshake.ts).
 */
export interface AdmissionLimits {
  /** Unauthenticated sockets per listener. */
  perListener: number;
  /** Unauthenticated sockets per source address (one host runs several agents: keep it above a host's devices). */
  perAddress: number;
}

export const DEFAULT_ADMISSION: AdmissionLimits = { perListener: 64, perAddress: 16 };

export class Admission {
  private pending = 0;
  private readonly byAddress = new Map<string, number>();

  constructor(private readonly limits: AdmissionLimits = DEFAULT_ADMISSION) {}

  /**
   * Take a slot for a new socket from `address`: returns the function that gives it back (call it once
   * the peer has authenticated or been refused), or, when a cap is reached, why the socket is refused.
   */
  admit(address: string): (() => void) | string {
    const fromAddress = this.byAddress.get(address) ?? 0;
    if (this.pending >= this.limits.perListener) {
      return `busy: ${this.pending} connections are already authenticating (at most ${this.limits.perListener})`;
    }
    if (fromAddress >= this.limits.perAddress) {
      return `busy: ${fromAddress} connections from ${address} are already authenticating (at most ${this.limits.perAddress} per address)`;
    }
    this.pending++;
    this.byAddress.set(address, fromAddress + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.pending--;
      const left = (this.byAddress.get(address) ?? 1) - 1;
      if (left > 0) this.byAddress.set(address, left);
      else this.byAddress.delete(address);
    };
  }
}
