/**
 * Processes started by Shoal receive their configuration — including the job secret — as one JSON
 * line on standard input, never on the command line (visible to every user in `ps`) or in the
 * environment (inherited by children and readable in /proc).
 */
export function readConfigFromStdin<T>(what: string): Promise<T> {
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (chunk: Buffer) => {
      text += chunk.toString('utf8');
      const newline = text.indexOf('\n');
      if (newline < 0) return;
      process.stdin.off('data', onData);
      process.stdin.pause();
      try {
        resolve(JSON.parse(text.slice(0, newline)) as T);
      } catch (err) {
        reject(new Error(`The ${what} configuration on standard input is not valid JSON: ${(err as Error).message}`));
      }
    };
    process.stdin.on('data', onData);
    process.stdin.once('end', () => reject(new Error(`Standard input closed before the ${what} configuration arrived. Start ${what}s through Shoal (\`shoal train\` or the studio).`)));
  });
}
