"""Starts N local worker processes of a multi-worker program and waits for them.

    python -m tensorflux.distribute.launch --num_processes 2 -- train.py --steps 100
    python -m tensorflux.distribute.launch -n 2 --devices_per_process 2 -- -m my.module

Each process runs `python <args after -->` with TF_CONFIG naming a "worker" job of N
tasks on free loopback ports and its own task index, which is what
`tf.distribute.experimental.MultiWorkerMirroredStrategy()` reads (worker 0's address is
the jax.distributed coordinator). `--devices_per_process K` gives each CPU process K
devices (XLA_FLAGS=--xla_force_host_platform_device_count=K). Output is not captured:
the workers write to this terminal.

The launcher returns 0 when every worker does. When one fails (non-zero exit, or
killed), the others are stopped (SIGTERM, then SIGKILL after `--grace` seconds: a
worker waiting in a collective for a dead peer would otherwise wait for JAX's
heartbeat timeout) and its exit status is returned; `--timeout` stops all of them
after that many seconds (exit status 124).

An Estimator cluster for `tf.estimator.train_and_evaluate` (TF 1.x's roles):

    python -m tensorflux.distribute.launch --chief -n 2 --ps 1 --evaluator -- train.py

starts a chief, 2 workers, 1 ps and an evaluator, each with its own TF_CONFIG (the
chief runs the training job on Ray; see tensorflux/_src/estimator/distributed_training.py).

On several hosts, start one process per host yourself with the same "cluster" in
TF_CONFIG and each host's own "task" (see tensorflux/distribute/multi_worker.py).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time


def free_ports(count, host="127.0.0.1"):
    """`count` distinct TCP ports free on `host` just now."""
    with contextlib.ExitStack() as stack:
        ports = []
        for _ in range(count):
            sock = stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
            sock.bind((host, 0))
            ports.append(sock.getsockname()[1])
        return ports


def tf_config(addresses, index, job="worker"):
    """TF_CONFIG (a JSON string) for task `index` of a job of workers at `addresses`."""
    if not 0 <= index < len(addresses):
        raise ValueError(f"index={index}; expected 0..{len(addresses) - 1} for "
                         f"{len(addresses)} addresses.")
    return json.dumps({"cluster": {job: list(addresses)},
                       "task": {"type": job, "index": index}})


def worker_environments(num_processes, host="127.0.0.1", devices_per_process=None,
                        base=None):
    """One environment per worker: `base` (default os.environ) plus TF_CONFIG (and
    XLA_FLAGS forcing host devices when `devices_per_process` is given)."""
    base = dict(os.environ if base is None else base)
    addresses = [f"{host}:{port}" for port in free_ports(num_processes, host)]
    envs = []
    for index in range(num_processes):
        env = dict(base, TF_CONFIG=tf_config(addresses, index))
        if devices_per_process:
            flag = f"--xla_force_host_platform_device_count={int(devices_per_process)}"
            env["XLA_FLAGS"] = " ".join(f for f in (base.get("XLA_FLAGS"), flag) if f)
        envs.append(env)
    return envs


def cluster_environments(num_workers, num_ps=0, chief=True, evaluator=False,
                         host="127.0.0.1", base=None):
    """[(task name, environment)] for an Estimator cluster as TF 1.x's
    `train_and_evaluate` reads it: a "chief" (if `chief`), `num_workers` "worker" and
    `num_ps` "ps" tasks on free loopback ports, plus an "evaluator" task outside the
    cluster (if `evaluator`); each environment is `base` (default os.environ) plus
    TF_CONFIG naming that task."""
    if min(num_workers, num_ps) < 0 or not (chief or num_workers):
        raise ValueError(f"num_workers={num_workers}, num_ps={num_ps}, chief={chief}; "
                         f"expected counts >= 0 and a chief or at least one worker.")
    base = dict(os.environ if base is None else base)
    jobs = [(job, n) for job, n in (("chief", int(chief)), ("worker", num_workers),
                                    ("ps", num_ps)) if n]
    ports = iter(free_ports(sum(n for _, n in jobs), host))
    cluster = {job: [f"{host}:{next(ports)}" for _ in range(n)] for job, n in jobs}
    tasks = [(job, i) for job, n in jobs for i in range(n)]
    tasks += [("evaluator", 0)] if evaluator else []
    return [(f"{job}:{i}", dict(base, TF_CONFIG=json.dumps(
        {"cluster": cluster, "task": {"type": job, "index": i}}))) for job, i in tasks]


def run(argv, num_processes, host="127.0.0.1", devices_per_process=None, timeout=None,
        grace=5.0, env=None, tasks=None):
    """Runs `python argv...` as `num_processes` workers (or one process per
    (name, environment) of `tasks`, e.g. `cluster_environments`); returns the exit
    status (0 if all succeeded, else the first failure's; 124 on timeout)."""
    if tasks is None:
        if num_processes < 1:
            raise ValueError(f"num_processes={num_processes}; expected at least 1.")
        envs = worker_environments(num_processes, host, devices_per_process, env)
        names = [f"worker {i}" for i in range(num_processes)]
    else:
        names, envs = [name for name, _ in tasks], [e for _, e in tasks]
    procs = []
    try:
        for worker_env in envs:
            # Each worker leads its own process group, so stopping it also stops what it
            # started.
            procs.append(subprocess.Popen([sys.executable, *argv], env=worker_env,
                                          start_new_session=True,
                                          preexec_fn=_die_with_parent))
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            codes = [p.poll() for p in procs]
            failed = [(i, c) for i, c in enumerate(codes) if c not in (None, 0)]
            if failed:
                index, code = failed[0]
                _say(f"{names[index]} exited with status {code}; stopping the others.")
                return _status(code)
            if all(c == 0 for c in codes):
                return 0
            if deadline is not None and time.monotonic() > deadline:
                _say(f"workers still running after {timeout:g} s; stopping them.")
                return 124
            time.sleep(0.05)
    finally:
        _stop(procs, grace)


def _parent_death_signal():
    """`prctl(PR_SET_PDEATHSIG, SIGKILL)` (Linux), looked up here in the parent so the
    forked child only calls it; None elsewhere."""
    try:
        import ctypes
        prctl = ctypes.CDLL("libc.so.6", use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    return lambda: prctl(1, signal.SIGKILL)  # 1: PR_SET_PDEATHSIG


_die_with_parent = _parent_death_signal()  # a worker is killed if the launcher dies


def _status(code):
    return 128 - code if code < 0 else code  # killed by signal N: 128 + N, as shells say


def _stop(procs, grace):
    running = [p for p in procs if p.poll() is None]
    for p in running:
        _signal_group(p, signal.SIGTERM)
    deadline = time.monotonic() + grace
    for p in running:
        try:
            p.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            _signal_group(p, signal.SIGKILL)
            p.wait()


def _signal_group(proc, sig):
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _say(message):
    print(f"tensorflux.distribute.launch: {message}", file=sys.stderr, flush=True)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--" not in argv:
        argv_ours, command = argv, []
    else:
        split = argv.index("--")
        argv_ours, command = argv[:split], argv[split + 1:]
    parser = argparse.ArgumentParser(
        prog="python -m tensorflux.distribute.launch",
        description="Start N local workers of a multi-worker tensorflux program "
                    "(TF_CONFIG on loopback ports) and wait for them.",
        usage="%(prog)s [-n N] [--devices_per_process K] [--timeout S] -- "
              "script.py [args ...]")
    parser.add_argument("-n", "--num_processes", type=int, default=2,
                        help="worker processes to start (default 2)")
    parser.add_argument("--devices_per_process", type=int, default=None,
                        help="force K CPU devices in each worker")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address the workers use (default 127.0.0.1)")
    parser.add_argument("--timeout", type=float, default=None,
                        help="stop every worker after S seconds (exit status 124)")
    parser.add_argument("--grace", type=float, default=5.0,
                        help="seconds between SIGTERM and SIGKILL when stopping workers")
    parser.add_argument("--chief", action="store_true",
                        help="an Estimator cluster: add a 'chief' task (-n counts the "
                             "'worker' tasks besides it)")
    parser.add_argument("--ps", type=int, default=0,
                        help="an Estimator cluster: M 'ps' tasks")
    parser.add_argument("--evaluator", action="store_true",
                        help="an Estimator cluster: add an 'evaluator' task")
    args = parser.parse_args(argv_ours)
    if not command:
        parser.error("give the program after `--`, e.g. `-- train.py --steps 10`")
    tasks = None
    if args.chief or args.ps or args.evaluator:
        try:
            tasks = cluster_environments(args.num_processes, args.ps, args.chief,
                                         args.evaluator, args.host)
        except ValueError as exc:
            parser.error(str(exc))
    elif args.num_processes < 1:
        parser.error(f"--num_processes={args.num_processes}; expected at least 1")
    # A launcher told to stop (SIGTERM) stops its workers first (run's `finally`).
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    try:
        return run(command, args.num_processes, args.host, args.devices_per_process,
                   args.timeout, args.grace, tasks=tasks)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
