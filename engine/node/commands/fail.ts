/** Print one readable error line and exit 1: how every `shoal` command reports bad input. */
export function fail(message: string): never {
  process.stderr.write(`shoal: ${message}\n`);
  process.exit(1);
}
