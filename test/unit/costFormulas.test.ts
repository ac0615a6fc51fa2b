import { describe, expect, it } from 'vitest';
import { p2pSeconds, ringAllGatherSeconds, ringAllReduceSeconds } from '../../engine/cost/collectives.js';
import { zeroModelStateBytes } from '../../engine/cost/zeroMemory.js';

const total = (b: { parameters: number; gradients: number; optimizer: number }) => b.parameters + b.gradients + b.optimizer;

describe('α-β collectives', () => {
  it('ring all-reduce: 2(n−1)/n·S/β + 2(n−1)α', () => {
    expect(ringAllReduceSeconds(1e9, 8, 1e-5, 1e10)).toBeCloseTo((2 * 7 * 1e9) / (8 * 1e10) + 14e-5, 12);
    expect(ringAllReduceSeconds(1e9, 1, 1e-5, 1e10)).toBe(0);
  });
  it('all-gather: (n−1)/n·S/β + (n−1)α; point-to-point α + S/β', () => {
    expect(ringAllGatherSeconds(4e6, 4, 2e-6, 1e9)).toBeCloseTo((3 * 4e6) / (4 * 1e9) + 6e-6, 12);
    expect(p2pSeconds(1e6, 1e-4, 1e9)).toBeCloseTo(1e-4 + 1e-3, 12);
  });
});

describe('ZeRO model-state memory (mixed-precision Adam)', () => {
  const psi = 1e9;
  const n = 64;
  it('stage 0: 16Ψ', () => expect(total(zeroModelStateBytes(psi, n, 0, 'mixed'))).toBeCloseTo(16 * psi, 0));
  it('stage 1: 4Ψ + 12Ψ/N', () => expect(total(zeroModelStateBytes(psi, n, 1, 'mixed'))).toBeCloseTo(4 * psi + (12 * psi) / n, 0));
  it('stage 2: 2Ψ + 14Ψ/N', () => expect(total(zeroModelStateBytes(psi, n, 2, 'mixed'))).toBeCloseTo(2 * psi + (14 * psi) / n, 0));
  it('stage 3: 16Ψ/N', () => expect(total(zeroModelStateBytes(psi, n, 3, 'mixed'))).toBeCloseTo((16 * psi) / n, 0));
  it('fp32 Adam (what tfjs trains with) is also 16Ψ unsharded, without a master copy', () => {
    expect(zeroModelStateBytes(psi, 1, 0, 'fp32')).toEqual({ parameters: 4 * psi, gradients: 4 * psi, optimizer: 8 * psi });
  });
});
