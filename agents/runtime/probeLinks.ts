import { placements } from '../../engine/plan/placement.js';
import type { LinkMeasurement } from '../../engine/protocol/profile.js';
import type { StageContext } from './stageContext.js';

export interface ProbeOptions {
  /** Round trips of a tiny message (latency) and of a large one (bandwidth). */
  smallRounds: number;
  largeRounds: number;
  largeBytes: number;
}

export const DEFAULT_PROBE: ProbeOptions = { smallRounds: 20, largeRounds: 4, largeBytes: 4 << 20 };

const SMALL_BYTES = 8;

/**
 * Measure latency (α) and bandwidth (β) of every link this agent has, over the same framed connections
 * the step uses (public send / receive only). The lower rank of each pair leads: it sends a message and
 * waits for a 1-byte acknowledgement; the higher rank echoes. α is half the smallest round trip of an
 * 8-byte message; β is a large message's bytes over its smallest round trip less 2α. Links are probed
 * one at a time, lower peers first, which every agent agrees on, so no two probes share a link.
 */
export async function probeLinks(ctx: StageContext, options: ProbeOptions = DEFAULT_PROBE): Promise<LinkMeasurement[]> {
  const me = ctx.me.rank;
  const peers = [...ctx.mesh.links.keys()].sort((a, b) => a - b);
  const layout = placements(ctx.plan);
  const deviceOf = (rank: number) => layout[rank]?.device ?? rank;
  const out: LinkMeasurement[] = [];
  const sizes = [...Array(options.smallRounds).fill(SMALL_BYTES), ...Array(options.largeRounds).fill(options.largeBytes)] as number[];
  for (const peer of peers) {
    const conn = ctx.mesh.link(peer);
    const tag = (i: number, kind: string) => `probe/${Math.min(me, peer)}-${Math.max(me, peer)}/${kind}/${i}`;
    if (me > peer) {
      for (let i = 0; i < sizes.length; i++) {
        await conn.receive(tag(i, 'ping'));
        conn.send({ type: 'probe', tag: tag(i, 'ack') }, new Uint8Array(1));
      }
      continue;
    }
    const rtts: number[] = [];
    for (let i = 0; i < sizes.length; i++) {
      const start = performance.now();
      conn.send({ type: 'probe', tag: tag(i, 'ping') }, new Uint8Array(sizes[i]));
      await conn.receive(tag(i, 'ack'));
      rtts.push(performance.now() - start);
    }
    const small = Math.min(...rtts.slice(0, options.smallRounds));
    const large = Math.min(...rtts.slice(options.smallRounds));
    const alpha = small / 2 / 1000;
    const transferSec = Math.max((large - small) / 1000, 1e-6);
    out.push({ from: me, to: peer, fromDevice: deviceOf(me), toDevice: deviceOf(peer), alpha, beta: options.largeBytes / transferSec, rttMs: small });
  }
  return out;
}
