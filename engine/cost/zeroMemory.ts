/**
 * Model-state memory per data-parallel device under ZeRO (Rajbhandari et al.), for Ψ parameters and N
 * data-parallel ranks. Mixed-precision Adam keeps fp16 parameters (2Ψ) and gradients (2Ψ) plus fp32
 * master weights, momentum and variance (K = 12Ψ): 16Ψ in all. Stage 1 shards the optimizer state,
 * stage 2 also the gradients, stage 3 also the parameters:
 *   stage 0: 2Ψ + 2Ψ + 12Ψ      = 16Ψ
 *   stage 1: 2Ψ + 2Ψ + 12Ψ/N    = 4Ψ + 12Ψ/N
 *   stage 2: 2Ψ + (2Ψ + 12Ψ)/N  = 2Ψ + 14Ψ/N
 *   stage 3: (2Ψ + 2Ψ + 12Ψ)/N  = 16Ψ/N
 * TensorFlow.js trains in fp32: parameters 4Ψ, gradients 4Ψ, Adam's m and v 8Ψ (no master copy).
 */
export type Precision = 'mixed' | 'fp32';
/** A named optimizer, or the number of float32 slots it keeps per parameter (engine/plan/optimizerOptions.ts's optimizerSlots). */
export type OptimizerKind = 'adam' | 'sgd' | 'sgd-momentum' | number;

export interface ModelStateBytes {
  parameters: number;
  gradients: number;
  optimizer: number;
}

function bytesPerParameter(precision: Precision, optimizer: OptimizerKind): ModelStateBytes {
  const weight = precision === 'mixed' ? 2 : 4;
  const states = typeof optimizer === 'number' ? optimizer : optimizer === 'adam' ? 2 : optimizer === 'sgd-momentum' ? 1 : 0;
  // Mixed precision also keeps an fp32 master copy of the weights in the optimizer state.
  const optimizerBytes = 4 * states + (precision === 'mixed' ? 4 : 0);
  return { parameters: weight, gradients: weight, optimizer: optimizerBytes };
}

export function zeroModelStateBytes(params: number, dataParallel: number, zeroStage: number, precision: Precision = 'fp32', optimizer: OptimizerKind = 'adam'): ModelStateBytes {
  const per = bytesPerParameter(precision, optimizer);
  const n = Math.max(1, dataParallel);
  return {
    parameters: (params * per.parameters) / (zeroStage >= 3 ? n : 1),
    gradients: (params * per.gradients) / (zeroStage >= 2 ? n : 1),
    optimizer: (params * per.optimizer) / (zeroStage >= 1 ? n : 1),
  };
}
