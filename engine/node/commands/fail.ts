/** Print one readable error line and exit 1: how every `shoal` command reports bad input. */
export function fail(message: string): never {
  process.stderr.write(`shoal: ${message}\n`);
  process.exit(1);
}

/** The same for a command line wrong as typed (unknown command or option, an argument too many): exit 2. */
export function failUsage(message: string): never {
  process.stderr.write(`shoal: ${message}\n`);
  process.exit(2);
}
