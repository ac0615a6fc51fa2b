/**
 * Layer classes tfjs-layers 4.22 registers that the agents refuse, each with the reason found by
 * training it (README.md's table of refused classes lists the same; test/integration/tfjsClasses.test.ts
 * holds the two together). A class leaves this list when the reason is gone.
 */
export const REFUSED_LAYER_CLASSES: Record<string, string> = {
  ThresholdedReLU: 'tfjs-layers 4.22 has no gradient for Greater, which its call uses, so no weight before it can train ("gradient function not found for Greater")',
  Conv3DTranspose: 'tfjs 4.22 has no gradient for Conv3DBackpropInputV2 ("gradient function not found for Conv3DBackpropInputV2")',
  Resizing: 'tfjs-layers 4.22 computes its output shape without the channels ([4, 4, 1] resized to 2×2 gives [2, 2, 4]) and fails inside a model ("resizeBilinear: x must be rank 3 or 4")',
  CenterCrop: 'tfjs-layers 4.22 fails inside a model: the layer checks its input against its output shape ("expected … shape [2,2,1] … received … [4,4,1]")',
  CategoryEncoding: 'tfjs-layers 4.22 fails inside a model: the layer checks its input against its output shape ("expected … shape [5] … received … [3]")',
  RandomWidth: 'tfjs-layers 4.22 gives it the output shape [undefined, -1, channels] and fails when training ("shape comprised of positive integers but got shape [-4,1]"); it is random as well',
  GaussianNoise: 'random in training: tfjs draws the noise unseeded, so agents would not agree with each other or with one process; needs a seeded draw like Shoal\'s Dropout (executor work)',
  GaussianDropout: 'random in training: tfjs draws the noise unseeded, so agents would not agree with each other or with one process; needs a seeded draw like Shoal\'s Dropout (executor work)',
  AlphaDropout: 'random in training: tfjs draws the noise unseeded, so agents would not agree with each other or with one process; needs a seeded draw like Shoal\'s Dropout (executor work)',
  Masking: 'its mask changes what later layers (RNNs, pooling, merges) compute, and the agents do not propagate masks between layer calls yet (executor work)',
  ConvLSTM2DCell: 'a cell is not a layer of its own: use ConvLSTM2D, which trains',
};
