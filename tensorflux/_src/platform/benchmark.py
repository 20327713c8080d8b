"""`tf.test.Benchmark`: timed runs reported through tf.logging (and a JSON file).

Subclasses register themselves; `tf.test.main()` with `--benchmarks=REGEX` runs their
methods whose names start with "benchmark" and match REGEX ("Class.method" or
"module.Class.method"). When TEST_REPORT_FILE_PREFIX is set, each report is also
written to `<prefix><name>` as JSON (TF writes a BenchmarkEntries proto there).
"""

from __future__ import annotations

import inspect
import json
import os
import re
import sys
import time

from tensorflux._src.platform import tf_logging as logging

__all__ = ["Benchmark", "benchmark_config", "benchmarks_main"]

_registry = []


class _BenchmarkRegistrar(type):
    def __new__(mcs, clsname, base, attrs):
        newclass = super().__new__(mcs, clsname, base, attrs)
        if not newclass.is_abstract():
            _registry.append(newclass)
        return newclass


def _report(name, iters, cpu_time, wall_time, throughput, extras, metrics):
    logging.info("Benchmark [%s] iters: %d, wall_time: %g, cpu_time: %g,"
                 "throughput: %g, extras: %s, metrics: %s", name, iters if iters else -1,
                 wall_time if wall_time else -1, cpu_time if cpu_time else -1,
                 throughput if throughput else -1, str(extras) if extras else "None",
                 str(metrics) if metrics else "None")
    prefix = os.environ.get("TEST_REPORT_FILE_PREFIX")
    if not prefix:
        return
    entry = {"name": name, "iters": iters, "cpu_time": cpu_time, "wall_time": wall_time,
             "throughput": throughput, "extras": extras or {}, "metrics": metrics or []}
    path = prefix + name.replace("/", "__")
    with open(path, "w") as f:
        json.dump({"entry": [entry]}, f, default=str)


class Benchmark(metaclass=_BenchmarkRegistrar):
    """Base class of benchmarks: `report_benchmark`, `run_op_benchmark`."""

    @classmethod
    def is_abstract(cls):
        return len(cls.mro()) <= 2  # Benchmark itself (cls, object)

    def _get_name(self, overwrite_name=None):
        """'Class.method' of the outermost benchmark method on the stack."""
        calling_class, name = None, None
        for frame_info in inspect.stack()[::-1]:
            f_self = frame_info.frame.f_locals.get("self", None)
            if isinstance(f_self, Benchmark):
                calling_class, name = f_self, frame_info.function
                break
        if calling_class is None:
            raise ValueError("Unable to determine calling Benchmark class.")
        return "%s.%s" % (type(calling_class).__name__, overwrite_name or name)

    def report_benchmark(self, iters=None, cpu_time=None, wall_time=None, throughput=None,
                         extras=None, name=None, metrics=None):
        """Reports one benchmark result (times in seconds, throughput in MB/s)."""
        _report(self._get_name(overwrite_name=name), iters, cpu_time, wall_time,
                throughput, extras, metrics)

    def run_op_benchmark(self, sess, op_or_tensor, feed_dict=None, burn_iters=2,
                         min_iters=10, store_trace=False, store_memory_usage=True,
                         name=None, extras=None, mbs=0):
        """Runs `op_or_tensor` `burn_iters` times, then times `min_iters` runs and
        reports (and returns) the median wall time. `store_trace` adds the run plan of
        one more traced run to extras; memory usage is not measured here."""
        for _ in range(burn_iters):
            sess.run(op_or_tensor, feed_dict=feed_dict)
        deltas = []
        for _ in range(min_iters):
            start = time.time()
            sess.run(op_or_tensor, feed_dict=feed_dict)
            deltas.append(time.time() - start)
        extras = dict(extras) if extras is not None else {}
        if store_trace:
            from tensorflux._src.runtime.config import RunMetadata, RunOptions, run_plan
            md = RunMetadata()
            sess.run(op_or_tensor, feed_dict=feed_dict,
                     options=RunOptions(trace_level=RunOptions.FULL_TRACE), run_metadata=md)
            extras["full_trace_run_plan"] = "\n".join(run_plan(md))
        deltas.sort()
        mid = len(deltas) // 2
        median = deltas[mid] if len(deltas) % 2 else (deltas[mid - 1] + deltas[mid]) / 2.0
        values = {"iters": min_iters, "wall_time": median, "extras": extras, "name": name,
                  "throughput": mbs / median if median else 0.0}
        self.report_benchmark(**values)
        return values

    def evaluate(self, tensors):
        """The values of `tensors` in the default session."""
        from tensorflux._src.framework import default_session
        return default_session.get_default_session().run(tensors)


def benchmark_config():
    """The ConfigProto benchmarks should use (TF turns off Grappler's dependency
    optimizer; nothing to turn off here)."""
    from tensorflux._src.runtime.config import default_config
    return default_config()


def _run_benchmarks(regex):
    for benchmark in list(_registry):
        names = (f"{benchmark.__module__}.{benchmark.__name__}", benchmark.__name__)
        instance = None
        for attr in sorted(dir(benchmark)):
            if not attr.startswith("benchmark"):
                continue
            method = getattr(benchmark, attr)
            if not callable(method):
                continue
            if not any(re.search(regex, f"{n}.{attr}") for n in names):
                continue
            instance = instance or benchmark()
            getattr(instance, attr)()


def benchmarks_main(true_main, argv=None):
    """Runs the benchmarks matching `--benchmarks=REGEX` in argv, else `true_main()`."""
    argv = sys.argv if argv is None else argv
    found = [a for a in argv if a.startswith(("--benchmarks=", "-benchmarks="))]
    if found:
        argv.remove(found[0])
        regex = found[0].split("=", 1)[1]
        from tensorflux._src.platform import app
        app.run(lambda _: _run_benchmarks(regex), argv=argv)
    else:
        true_main()
