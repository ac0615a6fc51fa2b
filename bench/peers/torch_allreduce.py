#!/usr/bin/env python3
"""PyTorch/Gloo peer for bench/allreduce.ts: all-reduce bus bandwidth of torch.distributed (gloo).

Spawns --procs processes on 127.0.0.1 (GLOO_SOCKET_IFNAME=lo). Per size: one warm-up all-reduce, a
barrier, `iters` back-to-back all-reduces of a float32 zero tensor, a barrier, the elapsed time / iters
— the same measurement as Shoal's worker. Prints one JSON line: {"results": [{bytes, iters, seconds}],
"torch": version}; on failure {"error": ...} and exit 1. Run with /usr/bin/python3 (Debian's torch).
"""
import argparse
import json
import os
import sys
import time


def iterations_for(nbytes, budget):
    return max(3, min(300, round(budget / nbytes)))


def worker(rank, procs, port, sizes, budget, queue):
    import torch
    import torch.distributed as dist
    dist.init_process_group('gloo', init_method=f'tcp://127.0.0.1:{port}', rank=rank, world_size=procs)
    results = []
    for nbytes in sizes:
        t = torch.zeros(nbytes // 4, dtype=torch.float32)
        iters = iterations_for(nbytes, budget)
        dist.all_reduce(t)
        dist.barrier()
        t0 = time.perf_counter()
        cpu0 = time.process_time()
        for _ in range(iters):
            dist.all_reduce(t)
        cpu = time.process_time() - cpu0  # all threads of this process, as Node's cpuUsage
        dist.barrier()
        results.append({'bytes': nbytes, 'iters': iters, 'seconds': (time.perf_counter() - t0) / iters, 'cpuSeconds': cpu / iters})
    if rank == 0:
        queue.put(results)
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--procs', type=int, required=True)
    parser.add_argument('--sizes', required=True)
    parser.add_argument('--budget-bytes', type=float, required=True)
    parser.add_argument('--port', type=int, default=29533)
    args = parser.parse_args()
    os.environ.setdefault('GLOO_SOCKET_IFNAME', 'lo')
    try:
        import torch
        import torch.multiprocessing as mp
    except Exception as exc:  # torch missing: report, do not crash the benchmark
        print(json.dumps({'error': f'torch unavailable: {exc}'}))
        sys.exit(1)
    sizes = [int(s) for s in args.sizes.split(',')]
    ctx = mp.get_context('spawn')
    queue = ctx.SimpleQueue()
    mp.start_processes(worker, args=(args.procs, args.port, sizes, args.budget_bytes, queue), nprocs=args.procs, join=True, start_method='spawn')
    print(json.dumps({'results': queue.get(), 'torch': torch.__version__}))


if __name__ == '__main__':
    main()
