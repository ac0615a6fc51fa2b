/**
 * Questions on the terminal for the CLI: a yes/no and a hidden line for passphrases. Prompts from hosts
 * checked in parallel are queued, so two questions never interleave on the screen.
 */

let queue: Promise<unknown> = Promise.resolve();

function enqueue<T>(task: () => Promise<T>): Promise<T> {
  const run = queue.then(task, task);
  queue = run.catch(() => undefined);
  return run;
}

/** Read one line from the terminal; with `hidden`, nothing is echoed (the passphrase never shows). */
export function askLine(question: string, hidden: boolean): Promise<string> {
  return enqueue(
    () =>
      new Promise<string>((resolve, reject) => {
        const stdin = process.stdin;
        process.stderr.write(question);
        const wasRaw = stdin.isRaw;
        stdin.setRawMode?.(true);
        stdin.resume();
        let line = '';
        const done = (err?: Error) => {
          stdin.off('data', onData);
          stdin.setRawMode?.(wasRaw);
          stdin.pause();
          process.stderr.write('\n');
          if (err) reject(err);
          else resolve(line);
        };
        const onData = (chunk: Buffer) => {
          for (const ch of chunk.toString('utf8')) {
            if (ch === '\r' || ch === '\n') return done();
            if (ch === '\u0003') return done(new Error('cancelled'));
            if (ch === '\u007f' || ch === '\b') {
              if (line.length > 0 && !hidden) process.stderr.write('\b \b');
              line = line.slice(0, -1);
            } else if (ch >= ' ') {
              line += ch;
              if (!hidden) process.stderr.write(ch);
            }
          }
        };
        stdin.on('data', onData);
      }),
  );
}

export async function askYesNo(question: string): Promise<boolean> {
  return /^y(es)?$/i.test((await askLine(`${question} [y/N] `, false)).trim());
}
