/** The flags a benchmark was given (`npm run bench -- <name> --steps 40 --skip-real`). */
export const args = process.argv.slice(2);

/** `--name N` as a number, or `fallback` when absent; a value that is not a number stops the benchmark with a message. */
export function numberFlag(name: string, fallback: number): number {
  const i = args.indexOf(`--${name}`);
  if (i < 0 || args[i + 1] === undefined) return fallback;
  const value = Number(args[i + 1]);
  if (!Number.isFinite(value)) {
    console.error(`bench: --${name} expects a number, got "${args[i + 1]}".`);
    process.exit(2);
  }
  return value;
}
