/** One-hot rows of `width` classes for class indices; a label outside [0, width) leaves its row zero. */
export function oneHotRows(labels: ArrayLike<number>, width: number, offset = 0): Float32Array {
  const out = new Float32Array(labels.length * width);
  for (let r = 0; r < labels.length; r++) {
    const c = labels[r] - offset;
    if (c >= 0 && c < width) out[r * width + c] = 1;
  }
  return out;
}
