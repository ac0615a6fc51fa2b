import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { probeElectron } from './electronProbe.js';
import { startWebShell } from './web.js';

/**
 * `npm start`: the Electron studio when this machine can run it, otherwise the browser shell on
 * 127.0.0.1 with a printed URL and one line on why. Flags: `--web` forces the browser shell,
 * `--port N` picks its port (0: any free port).
 */
interface LaunchArgs {
  web: boolean;
  port: number;
}

function parseArgs(argv: string[]): LaunchArgs {
  const args: LaunchArgs = { web: false, port: 0 };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--web') args.web = true;
    else if (arg === '--port' || arg.startsWith('--port=')) {
      const value = arg.includes('=') ? arg.slice('--port='.length) : argv[++i];
      const port = Number(value);
      if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port needs a port number from 0 to 65535, got "${value ?? ''}".`);
      args.port = port;
    } else if (arg === '--help' || arg === '-h') {
      console.log('Usage: shoal-studio [--web] [--port N]\n  --web     open the browser shell even when Electron can run\n  --port N  port of the browser shell on 127.0.0.1 (default: any free port)');
      process.exit(0);
    } else throw new Error(`Unknown option "${arg}". Use --web or --port N.`);
  }
  return args;
}

function runElectron(binary: string): void {
  const env = { ...process.env };
  delete env.ELECTRON_RUN_AS_NODE;
  const child = spawn(binary, [join(__dirname, 'electron', 'main.cjs')], { stdio: 'inherit', env });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}

async function runWebShell(port: number, why: string): Promise<void> {
  const shell = await startWebShell({ host: '127.0.0.1', port });
  console.log(`Shoal studio: ${shell.url}`);
  console.log(`Shoal: using the browser shell because ${why}; open the URL above in a browser.`);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      console.error(`shoal: ${signal} again, exiting without waiting for jobs to stop.`);
      process.exit(130);
    }
    stopping = true;
    console.log('Shoal: stopping jobs and closing the studio…');
    shell.close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(`shoal: closing failed: ${error instanceof Error ? error.message : String(error)}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  if (args.web) return runWebShell(args.port, '--web was given');
  const probe = probeElectron();
  if (probe.ok) return runElectron(probe.binary);
  return runWebShell(args.port, probe.reason);
}

main().catch((error: unknown) => {
  console.error(`shoal: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
