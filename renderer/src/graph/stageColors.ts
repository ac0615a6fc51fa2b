/** One colour per pipeline stage, readable on the dark theme; cycles after eight stages. */
const PALETTE = ['#4cc9f0', '#f4a261', '#80ed99', '#c77dff', '#ffd166', '#ef476f', '#06d6a0', '#a0c4ff'];

export function stageColor(stage: number | undefined): string {
  return stage === undefined ? '#6b7785' : PALETTE[stage % PALETTE.length];
}
