import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';
import { SYSTEM_PYTHON } from './peer.js';

/**
 * A PyTorch peer kept running beside the benchmark (bench/peers/torch_executor.py --serve), so that its
 * work can be interleaved with Shoal's, round by round, on the same core: `run(seconds)` trains whole
 * passes for that long, `gemm` times torch.mm. Its environment is the benchmark's with one thread per
 * library, minus OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE where set (tuning meant for tfjs's side of this
 * machine must not steer OpenBLAS to another kernel); `removedEnv` says which were.
 */
export class TorchPeer {
  readonly facts: Record<string, unknown>;
  readonly removedEnv: string[];
  private readonly lines: AsyncIterator<string>;

  private constructor(
    private readonly child: ChildProcessWithoutNullStreams,
    lines: AsyncIterator<string>,
    facts: Record<string, unknown>,
    removedEnv: string[],
  ) {
    this.lines = lines;
    this.facts = facts;
    this.removedEnv = removedEnv;
  }

  /** Starts the peer, or says why there is none (torch missing, the reference BLAS, a crash). */
  static async start(script: string, args: string[]): Promise<TorchPeer | { error: string }> {
    const env: Record<string, string | undefined> = { ...process.env, OMP_NUM_THREADS: '1', OPENBLAS_NUM_THREADS: '1', MKL_NUM_THREADS: '1' };
    const removedEnv = ['OPENBLAS_CORETYPE', 'OPENBLAS_L2_SIZE'].filter((name) => env[name] !== undefined);
    for (const name of removedEnv) delete env[name];
    const child = spawn(SYSTEM_PYTHON, [script, ...args, '--serve'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
    const failed = new Promise<never>((_, reject) => child.once('error', reject));
    const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    try {
      const first = await Promise.race([lines.next(), failed]);
      const facts = first.done ? { error: `${script} exited without a result${stderr ? `: ${stderr.trim().split('\n').pop()}` : ''}` } : (JSON.parse(first.value) as Record<string, unknown>);
      if (typeof facts.error === 'string' || !facts.ready) {
        child.kill();
        return { error: String(facts.error ?? 'the peer did not say it was ready') };
      }
      return new TorchPeer(child, lines, facts, removedEnv);
    } catch (err) {
      child.kill();
      return { error: `${SYSTEM_PYTHON} ${script}: ${(err as Error).message}` };
    }
  }

  private async ask(command: string): Promise<Record<string, unknown>> {
    this.child.stdin.write(`${command}\n`);
    const next = await this.lines.next();
    if (next.done) throw new Error(`the torch peer ended while answering "${command}"`);
    const reply = JSON.parse(next.value) as Record<string, unknown>;
    if (typeof reply.error === 'string') throw new Error(`torch peer: ${reply.error}`);
    return reply;
  }

  /** Whole training passes for about `seconds`; returns the steps and the seconds they took. */
  async run(seconds: number): Promise<{ steps: number; seconds: number }> {
    const r = await this.ask(`run ${seconds}`);
    return { steps: Number(r.steps), seconds: Number(r.seconds) };
  }

  /** FLOP/s of torch.mm of an m×k by a k×n float32 matrix, repeated for `seconds`. */
  async gemm(m: number, k: number, n: number, seconds: number): Promise<number> {
    return Number((await this.ask(`gemm ${m} ${k} ${n} ${seconds}`)).flops);
  }

  close(): void {
    this.child.stdin.end('quit\n');
  }
}
