"""The model server under load: requests/sec and latency, with and without batching.

Trains the digits LeNet for one epoch, exports it, and starts `tensorflux serve` as a
subprocess on a loopback port, once plain and once with --enable_batching (both up at
once; each cell's load alternates between them in --rounds rounds). A load
generator in this process (raw keep-alive HTTP/1.1 on uvloop when installed, kept as
light as it can be since it shares the cores with the server) keeps `concurrency`
predict requests of one image each in flight, for at most --requests requests or --seconds seconds per cell, after a
warm-up that compiles every batch size. Reported per cell: requests/sec, p50 and p99
latency; the reference is the same server without batching, measured in the same run
(the batched/plain throughput ratio). Prints a table; writes
benchmarks/results/serving.json (atomically).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "benchmarks", "results", "serving.json")
ALLOWED_BATCH_SIZES = (1, 8, 16, 32, 64)
BATCHING = """max_batch_size { value: 64 }
batch_timeout_micros { value: 0 }
max_enqueued_batches { value: 1000 }
num_batch_threads { value: 1 }
""" + "".join(f"allowed_batch_sizes: {size}\n" for size in ALLOWED_BATCH_SIZES)


def _cli(*args):
    subprocess.run([sys.executable, "-m", "tensorflux", *args], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, base, batching_file=None):
        self.port = _free_port()
        args = [sys.executable, "-m", "tensorflux", "serve", "--model_name", "digits",
                "--model_base_path", base, "--rest_api_port", str(self.port),
                "--host", "127.0.0.1", "--file_system_poll_wait_seconds", "0"]
        if batching_file:
            args += ["--enable_batching", "--batching_parameters_file", batching_file]
        self.process = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)
        self.url = f"http://127.0.0.1:{self.port}/v1/models/digits"

    def __enter__(self):
        import urllib.request
        deadline = time.time() + 120
        while time.time() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError("tensorflux serve exited")
            try:
                with urllib.request.urlopen(self.url, timeout=2) as response:
                    if response.status == 200:
                        return self
            except OSError:
                time.sleep(0.2)
        raise RuntimeError("tensorflux serve did not come up")

    def __exit__(self, *exc):
        self.process.terminate()
        self.process.wait(timeout=30)


class _Connection(asyncio.Protocol):
    """One keep-alive HTTP/1.1 connection sending prepared requests, one at a time.

    The load generator shares the machine's cores with the server, so it is kept as
    light as `wrk`: requests are prebuilt bytes and an answer is read only as far as its
    status line and Content-Length (aiohttp's client spent several times more CPU per
    request, taken from the server it measures)."""

    def __init__(self):
        self._buffer = bytearray()
        self._waiter = None
        self._transport = None

    def connection_made(self, transport):
        self._transport = transport

    def data_received(self, data):
        self._buffer += data
        self._answer_if_complete()

    def connection_lost(self, exc):
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_exception(ConnectionError(f"server closed the connection: {exc}"))

    def _answer_if_complete(self):
        head_end = self._buffer.find(b"\r\n\r\n")
        if head_end < 0 or self._waiter is None or self._waiter.done():
            return
        head = bytes(self._buffer[:head_end]).lower()
        at = head.find(b"\r\ncontent-length:")
        if at < 0:
            self._waiter.set_exception(ValueError("answer without Content-Length"))
            return
        line_end = head.find(b"\r\n", at + 2)
        length = int(head[at + 17:line_end if line_end > 0 else None])
        total = head_end + 4 + length
        if len(self._buffer) >= total:
            del self._buffer[:total]
            self._waiter.set_result(int(head[9:12]))  # "http/1.1 200 ok"

    async def request(self, raw):
        """Sends one prepared request; returns the answer's HTTP status."""
        self._waiter = asyncio.get_running_loop().create_future()
        self._transport.write(raw)
        return await self._waiter

    def close(self):
        self._transport.close()


def _prepared_posts(path, bodies):
    return [b"POST " + path.encode() + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/json\r\nContent-Length: " + str(len(body)).encode()
            + b"\r\n\r\n" + body for body in bodies]


async def _load(port, path, bodies, concurrency, max_requests, max_seconds):
    """`concurrency` connections each keeping one request in flight, until the request
    or time budget is spent."""
    loop = asyncio.get_running_loop()
    requests = _prepared_posts(path, bodies)
    latencies, errors = [], 0
    issued = 0
    start = time.perf_counter()
    deadline = start + max_seconds

    async def worker():
        nonlocal issued, errors
        _, connection = await loop.create_connection(_Connection, "127.0.0.1", port)
        try:
            while issued < max_requests and time.perf_counter() < deadline:
                raw = requests[issued % len(requests)]
                issued += 1
                t0 = time.perf_counter()
                if await connection.request(raw) != 200:
                    errors += 1
                latencies.append(time.perf_counter() - t0)
        finally:
            connection.close()

    await asyncio.gather(*[worker() for _ in range(concurrency)])
    return {"latencies": latencies, "errors": errors,
            "seconds": time.perf_counter() - start}


WARM_UP_CALLS = 12  # per batch size: compiles, and lets the compiler-option autotuner
# finish (it compiles its second candidate on a later call and times a few of each)


def _warm_up(url, images):
    """Compiles every allowed batch size: requests of exactly that many rows (a size
    first met under load would compile then and stall the cell for a fraction of a
    second each time, as measured before the autotuner was warmed too)."""
    import urllib.request
    for size in ALLOWED_BATCH_SIZES:
        body = json.dumps({"instances": images[:size].tolist()}).encode()
        for _ in range(WARM_UP_CALLS):
            request = urllib.request.Request(url, body, {"Content-Type": "application/json"})
            with urllib.request.urlopen(request, timeout=120) as response:
                response.read()


def _pooled(cells):
    """One cell from several rounds: total requests over total time, pooled latencies."""
    latencies = np.concatenate([c["latencies"] for c in cells]) * 1e3
    seconds = sum(c["seconds"] for c in cells)
    return {"requests": len(latencies), "errors": sum(c["errors"] for c in cells),
            "seconds": round(seconds, 3), "rounds": len(cells),
            "requests_per_sec": round(len(latencies) / seconds, 1),
            "p50_ms": round(float(np.percentile(latencies, 50)), 2),
            "p99_ms": round(float(np.percentile(latencies, 99)), 2)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrency", default="1,8,64")
    parser.add_argument("--requests", type=int, default=6000, help="per cell, at most")
    parser.add_argument("--seconds", type=float, default=12.0, help="per cell, at most")
    parser.add_argument("--rounds", type=int, default=4,
                        help="each cell's requests are split over this many rounds, "
                             "alternating plain and batching")
    options = parser.parse_args()
    levels = [int(c) for c in options.concurrency.split(",")]

    from tensorflux._src.cli import data_source
    from tensorflux.serving.server import run_event_loop
    work = tempfile.mkdtemp(prefix="serving-bench-")
    _cli("train", "--dataset", "digits", "--epochs", "1", "--logdir",
         os.path.join(work, "run"))
    base = os.path.join(work, "export")
    _cli("export", "--logdir", os.path.join(work, "run"), "--export_dir", base, "--version", "1")
    batching_file = os.path.join(work, "batching.config")
    with open(batching_file, "w") as f:
        f.write(BATCHING)
    data = data_source.load("digits", seed=0)
    images = np.asarray(data.test.x, np.float32)[:256]
    bodies = [json.dumps({"instances": [image.tolist()]}).encode() for image in images]

    results = []
    with Server(base) as plain, Server(base, batching_file) as batched:
        servers = {"plain": plain, "batching": batched}
        for server in servers.values():
            _warm_up(server.url + ":predict", images)
        for level in levels:
            # Rounds alternate the two servers (both stay up; the idle one costs nothing)
            # so a slow spell of the machine hits both modes alike.
            rounds = {mode: [] for mode in servers}
            for _ in range(options.rounds):
                for mode, server in servers.items():
                    rounds[mode].append(run_event_loop(_load(
                        server.port, "/v1/models/digits:predict", bodies, level,
                        options.requests // options.rounds, options.seconds / options.rounds)))
            for mode, cells in rounds.items():
                cell = _pooled(cells)
                cell.update(mode=mode, concurrency=level)
                results.append(cell)
                print(f"  {mode:9s} c={level:<3d} {cell['requests_per_sec']:8.1f} req/s  "
                      f"p50 {cell['p50_ms']:7.2f} ms  p99 {cell['p99_ms']:7.2f} ms  "
                      f"errors {cell['errors']}", flush=True)

    by = {(r["mode"], r["concurrency"]): r for r in results}
    print(f"\n{'concurrency':>11} | {'plain req/s':>11} {'p50':>7} {'p99':>7} | "
          f"{'batched req/s':>13} {'p50':>7} {'p99':>7} | {'speedup':>7}")
    ratios = {}
    for level in levels:
        p, b = by["plain", level], by["batching", level]
        ratios[level] = round(b["requests_per_sec"] / p["requests_per_sec"], 2)
        print(f"{level:>11} | {p['requests_per_sec']:>11.1f} {p['p50_ms']:>7.2f} "
              f"{p['p99_ms']:>7.2f} | {b['requests_per_sec']:>13.1f} {b['p50_ms']:>7.2f} "
              f"{b['p99_ms']:>7.2f} | {ratios[level]:>6.2f}x")
    record = {"benchmark": "serving", "model": "lenet on digits (1 image per request)",
              "batching_parameters": BATCHING, "cpu_count": os.cpu_count(),
              "cells": results, "batched_over_plain": ratios}
    os.makedirs(os.path.dirname(RESULTS), exist_ok=True)
    temporary = RESULTS + ".tmp"
    with open(temporary, "w") as f:
        json.dump(record, f, indent=2)
    os.replace(temporary, RESULTS)
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
