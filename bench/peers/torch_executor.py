#!/usr/bin/env python3
"""PyTorch peer for bench/executor.ts: training throughput of the executor benchmark's MLP and ResNet block on CPU.

Same shapes, batch and optimizer as the tfjs workloads:
  mlp     784-256-128-10 (ReLU), softmax cross-entropy over 10 classes
  resnet  input 8x8x2 (NCHW here: 2x8x8), Conv2d 2->4 k3 'same' without bias, BatchNorm (Keras's eps 1e-3 and
          momentum 0.99, i.e. torch momentum 0.01), ReLU, Conv2d 4->4 k3 'same', add the ReLU output (skip),
          global average pooling, Linear 4->3, softmax cross-entropy over 3 classes
SGD (lr --lr, no momentum), one batch per step taken in order from a pool of --batches batches (as model.fit
with shuffle: false), loss read back every step. torch.nn.CrossEntropyLoss on logits stands in for the tfjs
models' softmax head + cross-entropy on probabilities. One warm-up pass over the pool is not counted; then
whole passes until --seconds have gone by. Prints one JSON object on stdout; on failure {"error": ...}, exit 1.

--serve: after set-up and warm-up print one JSON line (the peer's facts), then answer each stdin line
  `run S` (whole passes for S seconds: {"steps", "seconds"}) and `gemm M K N S` (torch.mm of an MxK by a
  KxN matrix, repeated for S seconds: {"flops"}), one JSON line each, so that the benchmark can interleave
  this peer's work with its own on the same core. `quit` ends it.

The BLAS PyTorch uses is recorded (torch.__config__.show(), the libblas.so.3 alternative, the library
mapped into this process and OpenBLAS's core name), and a peer on the reference BLAS is refused: Debian's
python3-torch calls libblas.so.3, which is netlib's reference code (about 20x slower) unless the
libblas.so.3 alternative points at OpenBLAS (libopenblas0-pthread).

Run with /usr/bin/python3 (Debian's python3-torch), not a pyenv python.
"""
import argparse
import ctypes
import json
import os
import platform
import re
import sys
import time

LIBBLAS = '/usr/lib/x86_64-linux-gnu/libblas.so.3'


def blas_facts(torch):
    """Which BLAS this process runs: what torch was built against and what the loader mapped."""
    config = torch.__config__.show()
    built = re.search(r'BLAS_INFO=(\w+)', config)
    with open('/proc/self/maps') as maps:
        mapped = sorted({line.split()[-1] for line in maps if re.search(r'/lib(open)?blas[^/]*\.so', line)})
    corename = None
    for path in mapped:
        if 'openblas' in path:
            try:
                lib = ctypes.CDLL(path)
                lib.openblas_get_corename.restype = ctypes.c_char_p
                corename = lib.openblas_get_corename().decode()
            except (OSError, AttributeError):
                pass
    return {
        'builtWith': built.group(1) if built else None,
        'alternative': os.path.realpath(LIBBLAS) if os.path.exists(LIBBLAS) else None,
        'mapped': mapped,
        'openblasCore': corename,
    }


def reference_blas(facts):
    """torch calls the libblas.so.3 the loader mapped: netlib's reference one lives in .../blas/, OpenBLAS's in .../openblas-*/."""
    return any(os.path.basename(p).startswith('libblas.so') and '/blas/' in p for p in facts['mapped'])


def build(torch, name):
    nn = torch.nn
    if name == 'mlp':
        model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10))
        return model, (784,), 10

    class ResnetBlock(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Conv2d(2, 4, 3, padding=1, bias=False)
            self.bn = nn.BatchNorm2d(4, eps=1e-3, momentum=0.01)
            self.conv = nn.Conv2d(4, 4, 3, padding=1)
            self.head = nn.Linear(4, 3)

        def forward(self, x):
            h = torch.relu(self.bn(self.stem(x)))
            h = self.conv(h) + h
            return self.head(h.mean(dim=(2, 3)))

    if name == 'resnet':
        return ResnetBlock(), (2, 8, 8), 3
    raise ValueError(f'unknown model {name!r} (mlp or resnet)')


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--model', required=True)
    parser.add_argument('--batch', type=int, default=64)
    parser.add_argument('--batches', type=int, default=16)
    parser.add_argument('--seconds', type=float, default=3.5)
    parser.add_argument('--lr', type=float, default=0.01)
    parser.add_argument('--threads', type=int, default=1)
    parser.add_argument('--serve', action='store_true')
    args = parser.parse_args()

    try:
        import torch
    except Exception as err:  # the row must say why, never show a made-up number
        print(json.dumps({'error': f'cannot import torch in {sys.executable}: {err}'}))
        return 1

    try:
        torch.set_num_threads(args.threads)
        torch.manual_seed(0)
        model, shape, classes = build(torch, args.model)
        model.train()
        optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
        loss_fn = torch.nn.CrossEntropyLoss()
        pool = args.batch * args.batches
        pool_x = torch.rand(pool, *shape) * 2 - 1
        pool_y = torch.randint(0, classes, (pool,))
    except Exception as err:
        print(json.dumps({'error': f'{type(err).__name__}: {err}'}))
        return 1

    def step(i):
        start = (i % args.batches) * args.batch
        x, y = pool_x[start:start + args.batch], pool_y[start:start + args.batch]
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        return loss.item()

    for i in range(args.batches):  # warm-up pass
        step(i)
    blas = blas_facts(torch)
    facts = {'system': 'pytorch', 'version': torch.__version__, 'model': args.model, 'threads': torch.get_num_threads(), 'blas': blas, 'kernel': platform.release()}
    if reference_blas(blas):
        print(json.dumps({'error': f'PyTorch here runs on the reference BLAS ({", ".join(blas["mapped"]) or blas["alternative"]}): install libopenblas0-pthread and point libblas.so.3 at it (update-alternatives --set libblas.so.3-x86_64-linux-gnu /usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3)', **facts}))
        return 1
    if args.serve:
        return serve(torch, step, args, facts)
    steps = 0
    loss = 0.0
    started = time.perf_counter()
    while time.perf_counter() - started < args.seconds:
        for i in range(args.batches):
            loss = step(i)
        steps += args.batches
    seconds = time.perf_counter() - started

    print(json.dumps({
        **facts,
        'batch': args.batch,
        'steps': steps,
        'seconds': seconds,
        'samplesPerSec': steps * args.batch / seconds,
        'stepMs': seconds / steps * 1000,
        'finalLoss': loss,
    }))
    return 0


def serve(torch, step, args, facts):
    print(json.dumps({'ready': True, **facts}), flush=True)
    for line in sys.stdin:
        words = line.split()
        if not words or words[0] == 'quit':
            return 0
        if words[0] == 'run':
            seconds = float(words[1])
            steps = 0
            started = time.perf_counter()
            while time.perf_counter() - started < seconds:
                for i in range(args.batches):
                    step(i)
                steps += args.batches
            print(json.dumps({'steps': steps, 'seconds': time.perf_counter() - started}), flush=True)
        elif words[0] == 'gemm':
            m, k, n = (int(w) for w in words[1:4])
            a, b = torch.rand(m, k), torch.rand(k, n)
            torch.mm(a, b)
            reps = 0
            started = time.perf_counter()
            while time.perf_counter() - started < float(words[4]):
                torch.mm(a, b)
                reps += 1
            print(json.dumps({'flops': 2 * m * k * n * reps / (time.perf_counter() - started)}), flush=True)
        else:
            print(json.dumps({'error': f'unknown command {words[0]!r}'}), flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
