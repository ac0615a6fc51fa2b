/**
 * The α-β model of communication: a message of S bytes over a link with latency α (s) and bandwidth
 * β (bytes/s) takes α + S/β. Collectives over n members, as implemented by ring algorithms:
 */

/** Point-to-point transfer. */
export function p2pSeconds(bytes: number, alpha: number, beta: number): number {
  return bytes > 0 ? alpha + bytes / beta : 0;
}

/** Ring all-reduce: reduce-scatter + all-gather, 2(n−1) steps of S/n bytes: 2(n−1)/n·S/β + 2(n−1)α. */
export function ringAllReduceSeconds(bytes: number, n: number, alpha: number, beta: number): number {
  if (n <= 1 || bytes <= 0) return 0;
  return (2 * (n - 1) * bytes) / (n * beta) + 2 * (n - 1) * alpha;
}

/** Ring all-gather (or reduce-scatter) of a tensor whose full size is S: (n−1)/n·S/β + (n−1)α. */
export function ringAllGatherSeconds(bytes: number, n: number, alpha: number, beta: number): number {
  if (n <= 1 || bytes <= 0) return 0;
  return ((n - 1) * bytes) / (n * beta) + (n - 1) * alpha;
}

export const ringReduceScatterSeconds = ringAllGatherSeconds;

/** Bytes each member sends in a ring all-reduce (what a link carries per step). */
export function ringAllReduceBytesPerMember(bytes: number, n: number): number {
  return n <= 1 ? 0 : (2 * (n - 1) * bytes) / n;
}
