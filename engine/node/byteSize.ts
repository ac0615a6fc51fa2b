/** Bytes as the Node side prints them in progress lines and messages: mebibytes, one decimal ("12.5"). */
export function mib(bytes: number): string {
  return (bytes / 1024 ** 2).toFixed(1);
}
