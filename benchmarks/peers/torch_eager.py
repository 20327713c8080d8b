"""PyTorch eager timings for benchmarks/eager_overhead.py, run with an interpreter that
has torch (it is never a tensorflux dependency):

    /path/to/torch/python benchmarks/peers/torch_eager.py [--n 2000]

Same ops and shapes as the tensorflux columns (add, matmul, relu on float32 4x4; a
784-256-10 ReLU MLP Adam step, batch 128, sparse softmax cross-entropy), on the CPU with
the thread count the caller's environment gives. Prints one JSON object."""

import argparse
import json
import time

import numpy as np
import torch


def per_call(fn, n):
    fn()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t) / n


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=2000)
    args = parser.parse_args()
    a = torch.ones(4, 4)
    ops_us = {"add 4x4": per_call(lambda: torch.add(a, a), args.n) * 1e6,
              "matmul 4x4": per_call(lambda: torch.matmul(a, a), args.n) * 1e6,
              "relu 4x4": per_call(lambda: torch.relu(a), args.n) * 1e6}
    rng = np.random.RandomState(0)
    x = torch.from_numpy(rng.rand(128, 784).astype(np.float32))
    y = torch.from_numpy(rng.randint(0, 10, 128).astype(np.int64))
    model = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(),
                                torch.nn.Linear(256, 10))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    def step():
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    mlp_ms = per_call(step, 200) * 1e3
    print(json.dumps({"torch_version": torch.__version__, "threads": torch.get_num_threads(),
                      "ops_us": ops_us, "mlp_ms": mlp_ms}))


if __name__ == "__main__":
    main()
