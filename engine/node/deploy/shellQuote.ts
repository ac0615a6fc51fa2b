/** One argument for a POSIX shell: single-quoted, with embedded quotes closed and escaped. */
export function shQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** Job ids and process names become file names in shell scripts: refuse anything but a plain name. */
export function assertPlainName(value: string, what: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(value)) throw new Error(`${what} "${value}" may only contain letters, digits, dot, dash and underscore.`);
  return value;
}
