"""A worker task (a Ray actor): pulls parameters, computes gradients, pushes them.

The worker builds its own copy of the model with the user's `model_fn` and runs it in
a tensorflux Session, but keeps no variables of its own: each step feeds the pulled
values into the variables' snapshots (`w/read`), so the compiled step reads them like
any other input, and fetches the gradients (and the values UPDATE_OPS would assign,
e.g. batch norm's moving averages) to push back to the ps tasks holding those
variables. Its input comes from `input_fn(worker_index, num_workers)`: an iterable of
feed dicts keyed by tensor or placeholder names ("inputs:0" or "inputs"), or None when
the model reads its own input (tf.data in the graph).

One step, talking to the ps tasks directly through Ray's object store:

    pull every shard -> (version, values) per ps     (stop when asked to, or done)
    run the model: gradients, update values, metrics
    push each ps its gradients, tagged with the version they were computed at
    synchronous SGD only: wait until every ps has moved past that version

`run` returns a summary when the ps tasks ask the workers to stop, the global step
reaches the target, the input ends (input_fn's iterator, or an OutOfRangeError from
the model's own tf.data pipeline), or a ps task is gone ("ps_failed": the driver
restarts it and calls `run` again).
"""

from __future__ import annotations

import time

import numpy as np

from tensorflux._src.distribute.ps import ray_runtime
from tensorflux._src.distribute.ps.model_layout import ModelGraph
from tensorflux._src.framework import errors as tf_errors

# What `run` counts: steps, bytes of parameters pulled and gradients pushed, pushes a
# ps found stale, and seconds computing and waiting (pulls, barriers).
TOTALS = ("steps", "bytes_pulled", "bytes_pushed", "stale_pushes", "compute_s", "wait_s")


class WorkerTask:
    def __init__(self, index, num_workers, layout, model_fn, input_fn):
        import tensorflux as tf

        self.index, self.num_workers, self.layout = index, num_workers, layout
        if hasattr(model_fn, "for_worker"):  # a model built per replica (an Estimator's)
            model_fn = model_fn.for_worker(index, num_workers)
        self.model = ModelGraph(model_fn)
        self._check_same_model()
        self.sess = tf.Session(graph=self.model.graph)
        self.sess.run(self.model.local_init)
        self.inputs = iter(input_fn(index, num_workers)) if input_fn is not None else None
        self._feed_keys = {}
        by_name = self.model.by_name
        self.snapshots = {name: by_name[name].value() for name in by_name}
        # Fetched per step: gradients, then update values, then the metrics.
        self.grad_names = [s.name for s in layout.variables if s.has_gradient]
        updates = {name: value for name, _, value in self.model.updates}
        self.update_names = [s.name for s in layout.variables if s.update]
        self.metric_names = ["loss", *layout.metric_names]
        self.fetches = ([self.model.gradients[n] for n in self.grad_names]
                        + [updates[n] for n in self.update_names]
                        + [self.model.loss] + [self.model.metrics[n]
                                               for n in layout.metric_names])
        self.task_of = layout.placement
        self.totals = dict.fromkeys(TOTALS, 0)

    def _check_same_model(self):
        mine = {name: tuple(v.shape.as_list()) for name, v in self.model.by_name.items()}
        expected = {s.name: s.shape for s in self.layout.variables}
        if mine != expected:
            raise ValueError(
                f"worker {self.index}: model_fn built other variables than on the driver "
                f"(received {sorted(mine.items())}, expected {sorted(expected.items())}); "
                f"model_fn must build the same model every time it is called")

    def ready(self):
        return self.index

    def run(self, ps_tasks, until_step, sync):
        """Trains until stopped; returns {"status": ..., counters} (module docstring)."""
        import ray

        errors = ray_runtime.actor_errors()
        self.totals = dict.fromkeys(TOTALS, 0)  # counters of this run only
        status = "stopped"
        try:
            while True:
                started = time.perf_counter()
                pulled = ray.get([ps.pull.remote() for ps in ps_tasks])
                if any(stop for _, stop, _ in pulled):
                    break
                versions = [version for version, _, _ in pulled]
                global_step = versions[self.layout.chief_task]
                if global_step >= until_step:
                    status = "done"
                    break
                params = {}
                for shard in ray.get([refs[0] for _, _, refs in pulled]):
                    params.update(shard)
                feeds = self._next_feeds()
                if feeds is None:
                    status = "end_of_input"
                    break
                for name, value in params.items():
                    feeds[self.snapshots[name]] = value
                if self.layout.global_step is not None:
                    feeds[self.snapshots[self.layout.global_step]] = global_step
                computed = time.perf_counter()
                self.totals["wait_s"] += computed - started
                try:
                    values = self.sess.run(self.fetches, feeds)
                except tf_errors.OutOfRangeError:  # the model's own input pipeline ended
                    status = "end_of_input"
                    break
                self.totals["compute_s"] += time.perf_counter() - computed
                pushes = self._split(values, versions)
                acks = ray.get([ps.push.remote(*push) for ps, push in zip(ps_tasks, pushes)])
                self.totals["steps"] += 1
                self.totals["bytes_pulled"] += sum(v.nbytes for v in params.values())
                self.totals["bytes_pushed"] += sum(
                    g.nbytes for grads, _, _, _, _ in pushes for g in grads.values())
                self.totals["stale_pushes"] += int(not all(ok for ok, _ in acks))
                if sync:
                    waited = time.perf_counter()
                    after = ray.get([ps.wait_for_version.remote(v + 1)
                                     for ps, v in zip(ps_tasks, versions)])
                    self.totals["wait_s"] += time.perf_counter() - waited
                    if any(stop for _, stop in after):
                        break
        except errors as exc:
            status = "ps_failed"
            self.totals["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
        return {"worker": self.index, "status": status, **self.totals}

    def _next_feeds(self):
        if self.inputs is None:
            return {}
        try:
            given = next(self.inputs)
        except StopIteration:
            return None
        feeds = {}
        for key, value in given.items():
            if key not in self._feed_keys:
                self._feed_keys[key] = self._resolve(key)
            feeds[self._feed_keys[key]] = value
        return feeds

    def _resolve(self, key):
        if not isinstance(key, str):
            raise TypeError(f"input_fn must yield feed dicts keyed by tensor names such as "
                            f"'inputs:0' or 'inputs'; received key {key!r}")
        return self.model.graph.get_tensor_by_name(key if ":" in key else key + ":0")

    def _split(self, values, versions):
        """One push per ps: (grads, updates, version, worker, metrics)."""
        grads = dict(zip(self.grad_names, values))
        rest = values[len(self.grad_names):]
        updates = dict(zip(self.update_names, rest))
        metrics = {name: float(np.asarray(v)) for name, v in
                   zip(self.metric_names, rest[len(self.update_names):])}
        pushes = [({}, {}, version, self.index, metrics) for version in versions]
        for name, g in grads.items():
            pushes[self.task_of[name]][0][name] = g
        for name, value in updates.items():
            pushes[self.task_of[name]][1][name] = value
        return pushes
