/** Where a CLI command writes; tests pass their own to read what the user would see. */
export interface CommandIo {
  out(text: string): void;
  err(text: string): void;
  /** Whether questions can be asked (a terminal on stdin). */
  interactive: boolean;
}

/** The terminal: stdout, stderr, and questions when stdin is a TTY. */
export const processIo: CommandIo = {
  out: (t) => process.stdout.write(t),
  err: (t) => process.stderr.write(t),
  interactive: Boolean(process.stdin.isTTY),
};
