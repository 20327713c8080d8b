"""Parameter-server training on Ray: throughput and the backup worker's effect.

1. PS throughput: asynchronous SGD on 1 ps task with 1, 2 and 4 workers, for an MLP
   of ~4 MB of parameters (512-1024-512-10) and one of ~40 MB (1024-2048-2560-1024-10),
   batch 32 of synthetic data: global steps/sec and parameter bytes/sec moved (each
   worker step pulls every parameter and pushes a gradient for each). The reference,
   measured in the same run, is the same model's training step in one process (a
   tensorflux Session, no ps): `ratio` = PS steps/sec / one-process steps/sec.
2. Synchronous step time with 3 workers and 1 backup (SyncReplicasOptimizer with
   replicas_to_aggregate=2, total_num_replicas=3) on the 4 MB model, without and with
   one worker slowed by a fixed delay per step, and, for comparison, the slowed run
   without a backup (replicas_to_aggregate=3), where every step waits for it.

All actors run on this machine (a local Ray instance), so the workers, the ps task and
the driver share its cores: more workers add parallelism only where cores are free,
and the bytes move through shared memory, not a network. `run()` prints the tables
and writes benchmarks/results/ps.json; benchmarks/distributed.py calls it.

    python benchmarks/ps_bench.py [--quick]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing import write_json_atomically  # noqa: E402

MODELS = {"4MB": (512, 1024, 512, 10), "40MB": (1024, 2048, 2560, 1024, 10)}
BATCH = 32
SLOW_DELAY_S = 0.25
RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "ps.json")


class MLP:
    """model_fn: a ReLU MLP with the given layer widths and a softmax cross-entropy."""

    def __init__(self, dims):
        self.dims = dims

    def __call__(self):
        import tensorflux as tf

        tf.set_random_seed(0)
        x = tf.placeholder(tf.float32, [None, self.dims[0]], name="x")
        y = tf.placeholder(tf.int64, [None], name="y")
        h = x
        for i, width in enumerate(self.dims[1:]):
            h = tf.layers.dense(h, width, activation=None if i == len(self.dims) - 2
                                else tf.nn.relu)
        tf.train.get_or_create_global_step()
        return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y,
                                                                             logits=h))


class SyntheticInput:
    """input_fn: one fixed random batch per worker; `slow_worker` sleeps each step."""

    def __init__(self, dims, slow_worker=None, delay_s=0.0):
        self.dims, self.slow_worker, self.delay_s = dims, slow_worker, delay_s

    def __call__(self, worker_index, num_workers):
        rng = np.random.default_rng(worker_index)
        feed = {"x": rng.standard_normal((BATCH, self.dims[0])).astype(np.float32),
                "y": rng.integers(0, self.dims[-1], BATCH).astype(np.int64)}
        while True:
            if worker_index == self.slow_worker:
                time.sleep(self.delay_s)
            yield feed


def one_process_steps_per_sec(dims, steps):
    """The reference: the same step in one tensorflux Session (no ps, no Ray)."""
    import tensorflux as tf

    graph = tf.Graph()
    with graph.as_default():
        loss = MLP(dims)()
        train_op = tf.train.GradientDescentOptimizer(0.01).minimize(
            loss, global_step=tf.train.get_global_step())
        init = tf.global_variables_initializer()
    feed = next(SyntheticInput(dims)(0, 1))
    with tf.Session(graph=graph) as sess:
        sess.run(init)
        feeds = {graph.get_tensor_by_name(k + ":0"): v for k, v in feed.items()}
        for _ in range(3):
            sess.run(train_op, feeds)
        start = time.perf_counter()
        for _ in range(steps):
            sess.run(train_op, feeds)
        return steps / (time.perf_counter() - start)


def ps_run(dims, workers, steps, optimizer, input_fn):
    """(TrainingResult of the timed steps, parameter bytes) after a warm-up."""
    import tensorflux as tf

    with tf.distribute.ParameterServerTraining(MLP(dims), optimizer, input_fn,
                                               num_workers=workers, num_ps=1) as job:
        job.train(steps=2 * workers)  # every worker compiles its step
        result = job.train(steps=steps)
        return result, job.layout.nbytes


def throughput(quick):
    import tensorflux as tf

    rows = []
    for name, dims in MODELS.items():
        steps = {"4MB": 40, "40MB": 12}[name] // (2 if quick else 1)
        local = one_process_steps_per_sec(dims, steps)
        for workers in (1, 2, 4):
            result, nbytes = ps_run(dims, workers, steps,
                                    tf.train.GradientDescentOptimizer(0.01),
                                    SyntheticInput(dims))
            rows.append({"model": name, "parameter_bytes": nbytes, "workers": workers,
                         "steps_per_sec": result.steps_per_sec,
                         "bytes_per_sec": result.bytes_per_sec,
                         "one_process_steps_per_sec": local,
                         "ratio": result.steps_per_sec / local})
    return rows


def sync_backup(quick):
    import tensorflux as tf

    dims, steps = MODELS["4MB"], 12 if quick else 24
    rows = []
    for label, aggregate, slow in (("no slow worker, 1 backup", 2, None),
                                   ("1 slow worker, 1 backup", 2, 2),
                                   ("1 slow worker, no backup", 3, 2)):
        opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.01),
                                             replicas_to_aggregate=aggregate,
                                             total_num_replicas=3)
        result, _ = ps_run(dims, 3, steps, opt, SyntheticInput(dims, slow, SLOW_DELAY_S))
        rows.append({"run": label, "replicas_to_aggregate": aggregate, "workers": 3,
                     "slow_worker_delay_s": SLOW_DELAY_S if slow is not None else 0.0,
                     "step_time_s": 1.0 / result.steps_per_sec,
                     "stale_gradients_dropped": result.stale_gradients_dropped})
    return rows


def run(quick=False):
    """Runs both parts, prints the tables, writes benchmarks/results/ps.json."""
    import ray

    # The actors unpickle MLP and SyntheticInput: send this module's code by value, so
    # it need not be importable where they run (however the caller imported it).
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    started_here = not ray.is_initialized()
    if started_here:
        ray.init(num_cpus=8, include_dashboard=False, log_to_driver=False,
                 configure_logging=False)
    try:
        started = time.perf_counter()
        rows = throughput(quick)
        sync_rows = sync_backup(quick)
        seconds = time.perf_counter() - started
    finally:
        if started_here:
            ray.shutdown()
    print(f"PS training on Ray (asynchronous SGD, 1 ps task, batch {BATCH}), "
          f"{os.cpu_count()} CPU cores shared by all actors")
    print(f"{'model':>6} {'MB':>6} {'workers':>7} {'steps/sec':>10} {'MB/sec moved':>13} "
          f"{'1-process steps/sec':>20} {'ratio':>6}")
    for r in rows:
        print(f"{r['model']:>6} {r['parameter_bytes'] / 1e6:>6.1f} {r['workers']:>7} "
              f"{r['steps_per_sec']:>10.1f} {r['bytes_per_sec'] / 1e6:>13.1f} "
              f"{r['one_process_steps_per_sec']:>20.1f} {r['ratio']:>6.2f}")
    print("ratio = PS steps/sec / the same step in one process; MB/sec counts parameters "
          "pulled plus gradients pushed.")
    print(f"\nsynchronous SGD, 3 workers, 4MB model; slow worker sleeps "
          f"{SLOW_DELAY_S:.2f}s per step")
    print(f"{'run':>26} {'step time (s)':>14} {'stale dropped':>14}")
    for r in sync_rows:
        print(f"{r['run']:>26} {r['step_time_s']:>14.3f} {r['stale_gradients_dropped']:>14}")
    payload = {"batch": BATCH, "cores": os.cpu_count(), "throughput": rows,
               "sync_backup": sync_rows, "seconds": seconds}
    write_json_atomically(RESULTS, payload)
    return payload


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="half the timed steps")
    run(parser.parse_args().quick)


if __name__ == "__main__":
    main()
