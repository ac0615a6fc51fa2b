#!/usr/bin/env python3
"""PyTorch peer for bench/backend.ts: training throughput of the zoo `mlp` on CPU.

Same workload as Shoal's ReferenceTrainer: 784-512-256-10 ReLU, softmax cross-entropy, Adam
(lr 1e-3, betas 0.9/0.999, eps 1e-7 as in Shoal's default plan), batch 64, one batch gathered from an
8000-sample pool per step, loss read back every step. Data are synthetic: throughput does not depend on
the digits. Prints one JSON object on stdout; on failure prints {"error": ...} and exits 1.

Run with /usr/bin/python3 (Debian's python3-torch), not a pyenv python.
"""
import argparse
import json
import os
import sys
import time


def blas_in_use():
    """The BLAS shared library actually mapped into this process, and what kind it is."""
    libs = set()
    with open('/proc/self/maps') as maps:
        for line in maps:
            path = line.split()[-1] if len(line.split()) >= 6 else ''
            name = os.path.basename(path)
            if any(k in name for k in ('blas', 'mkl_', 'blis', 'atlas')) and 'cublas' not in name:
                libs.add(path)
    if not libs:
        return {'library': None, 'kind': 'none mapped (torch internal gemm?)'}
    real = sorted({os.path.realpath(p) for p in libs})
    joined = ' '.join(real).lower()
    if 'openblas' in joined:
        kind = 'OpenBLAS'
    elif 'mkl' in joined:
        kind = 'MKL'
    elif 'blis' in joined:
        kind = 'BLIS'
    elif 'atlas' in joined:
        kind = 'ATLAS'
    elif '/blas/' in joined:
        kind = 'reference BLAS (netlib)'
    else:
        kind = 'unknown'
    return {'library': real, 'kind': kind}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--steps', type=int, default=100)
    parser.add_argument('--warmup', type=int, default=5)
    parser.add_argument('--batch', type=int, default=64)
    parser.add_argument('--threads', type=int, default=1)
    args = parser.parse_args()

    try:
        import torch
    except Exception as err:  # the row must say why, never show a made-up number
        print(json.dumps({'error': f'cannot import torch: {err}', 'python': sys.executable}))
        return 1

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(784, 512), torch.nn.ReLU(),
        torch.nn.Linear(512, 256), torch.nn.ReLU(),
        torch.nn.Linear(256, 10),
    )
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.999), eps=1e-7)
    loss_fn = torch.nn.CrossEntropyLoss()
    pool_x = torch.rand(8000, 784)
    pool_y = torch.randint(0, 10, (8000,))

    def step():
        idx = torch.randint(0, pool_x.shape[0], (args.batch,))
        x, y = pool_x[idx], pool_y[idx]
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        return loss.item()

    for _ in range(args.warmup):
        step()
    started = time.perf_counter()
    loss = 0.0
    for _ in range(args.steps):
        loss = step()
    seconds = time.perf_counter() - started

    print(json.dumps({
        'system': 'pytorch',
        'version': torch.__version__,
        'threads': torch.get_num_threads(),
        'blas': blas_in_use(),
        'steps': args.steps,
        'warmup': args.warmup,
        'batch': args.batch,
        'seconds': seconds,
        'samplesPerSec': args.steps * args.batch / seconds,
        'stepMs': seconds / args.steps * 1000,
        'finalLoss': loss,
    }))
    return 0


if __name__ == '__main__':
    sys.exit(main())
