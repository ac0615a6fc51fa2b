import type { Client } from 'ssh2';

export interface ClockSkew {
  /** Host clock minus this machine's clock, in ms (positive: the host is ahead). */
  skewMs: number;
  /** The true skew lies within skewMs ± uncertaintyMs (half the round trip of the best sample). */
  uncertaintyMs: number;
}

/** A shell loop that prints the time once per input line, so samples cost one round trip, not a process start. */
const CLOCK_LOOP = 'while read -r _; do date +%s%N; done';

/**
 * Estimate the host's clock offset: the remote reading was taken somewhere between sending a line and
 * receiving the answer, so the midpoint is the estimate and half the round trip bounds its error. The
 * sample with the shortest round trip is the tightest.
 */
export function measureClockSkew(client: Client, samples = 5, timeoutMs = 15_000): Promise<ClockSkew> {
  return new Promise((resolve, reject) => {
    client.exec(`sh -c '${CLOCK_LOOP}'`, (err, channel) => {
      if (err) return reject(new Error(`cannot read the host's clock: ${err.message}`));
      let best: ClockSkew | undefined;
      let sent = 0;
      let buffered = '';
      const timer = setTimeout(() => finish(new Error(`the host's clock did not answer within ${timeoutMs / 1000} s`)), timeoutMs);
      const finish = (error?: Error) => {
        clearTimeout(timer);
        channel.removeAllListeners('data');
        channel.end();
        if (error || !best) reject(error ?? new Error("cannot read the host's clock"));
        else resolve(best);
      };
      const ask = () => {
        sent = Date.now();
        channel.write('\n');
      };
      channel.on('data', (d: Buffer) => {
        const received = Date.now();
        buffered += d.toString('latin1');
        if (!buffered.includes('\n')) return;
        const text = buffered.trim();
        buffered = '';
        // GNU date prints nanoseconds; BSD date prints a literal N: fall back to whole seconds (±500 ms).
        const nanos = /^\d{19}$/.test(text);
        const secs = /^(\d{10})N?$/.exec(text);
        if (!nanos && !secs) return finish(new Error(`cannot read the host's clock: date printed "${text.slice(0, 60)}"`));
        const remoteMs = nanos ? Number(BigInt(text) / 1_000_000n) : Number(secs![1]) * 1000 + 500;
        const sample = { skewMs: remoteMs - (sent + received) / 2, uncertaintyMs: (received - sent) / 2 + (nanos ? 0 : 500) };
        if (!best || sample.uncertaintyMs < best.uncertaintyMs) best = sample;
        if (--samples > 0) ask();
        else finish();
      });
      channel.once('close', () => finish(best ? undefined : new Error("the host's clock probe ended early")));
      ask();
    });
  });
}
