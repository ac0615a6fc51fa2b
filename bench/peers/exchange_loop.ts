/**
 * The physical reference for a pipeline hand-over: two bare Node processes in 1F1B's steady state at
 * p = 2, with nothing of Shoal. Each holds its core for a turn-around of C ms (the same busy wait as
 * a busy synthetic stage), sends the other a message of the activation's size over loopback TCP and
 * waits for the other's, again and again. Whatever a cycle takes beyond C is what hand-overs cost
 * this machine and Node, before any runtime adds its own.
 *
 *   tsx bench/peers/exchange_loop.ts --turnaround-ms C --bytes B [--cycles N]
 *
 * Prints one JSON line: { "turnAroundMs", "bytes", "cycles", "overheadMsPerCycle" }.
 */
import { fork } from 'node:child_process';
import { connect, createServer, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { spinThread } from '../../agents/exec/threadWait.js';

const args = process.argv.slice(2);
const flag = (name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const turnAroundMs = flag('turnaround-ms', 0);
const bytes = flag('bytes', 25_088);
const cycles = flag('cycles', turnAroundMs >= 60 ? 24 : 100);
/** Cycles left out at the start: connection and JIT warm-up. */
const WARM_UP = 4;

/** Run the loop on `socket`; `done` gets the mean milliseconds per cycle after warm-up. */
function exchange(socket: Socket, done?: (msPerCycle: number) => void): void {
  socket.setNoDelay(true);
  const message = Buffer.alloc(bytes, 1);
  let pending = 0;
  let turns = 0;
  let started = 0;
  const turn = () => {
    spinThread(turnAroundMs);
    socket.write(message);
    turns++;
  };
  socket.on('data', (chunk: Buffer) => {
    pending += chunk.length;
    while (pending >= bytes) {
      pending -= bytes;
      if (turns === WARM_UP) started = performance.now();
      if (done && turns === WARM_UP + cycles) return done((performance.now() - started) / cycles);
      turn();
    }
  });
  turn();
}

if (args[0] === '--child') {
  let connected = false;
  const socket = connect(Number(args[1]), '127.0.0.1', () => {
    connected = true;
    exchange(socket);
  });
  // The parent closes the connection once it has measured enough; before that, an error is a failure.
  socket.on('close', () => process.exit(0));
  socket.on('error', (err) => {
    if (!connected) console.error(`exchange loop: cannot reach the parent: ${err.message}`);
    process.exit(connected ? 0 : 1);
  });
} else {
  let measured = false;
  const server = createServer((socket) =>
    exchange(socket, (msPerCycle) => {
      measured = true;
      console.log(JSON.stringify({ turnAroundMs, bytes, cycles, overheadMsPerCycle: msPerCycle - turnAroundMs }));
      socket.destroy();
      server.close();
    }),
  );
  server.listen(0, '127.0.0.1', () => {
    const port = (server.address() as { port: number }).port;
    const child = fork(fileURLToPath(import.meta.url), ['--child', String(port), ...args], { execArgv: process.execArgv });
    // A child that dies before the measurement is done would otherwise leave this process waiting.
    child.on('exit', (code) => {
      if (measured) return;
      console.error(`exchange loop: the other process exited (code ${code}) before ${cycles} cycles were measured`);
      process.exit(1);
    });
  });
}
