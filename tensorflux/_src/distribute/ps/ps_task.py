"""A parameter-server task (a Ray actor): one shard of the model's variables.

The shard lives in a tensorflux Session, in a small graph of its own: the shard's
variables under their model names, a gradient placeholder per trainable variable, and
the user's optimizer's `apply_gradients` over them, so every TF1 optimizer (SGD,
Momentum, Adam, RMSProp, ...) updates the variables with its own fused update op and
slots (`w/Adam`, `beta1_power`) and learning-rate schedules read this task's
`global_step`. Workers talk to it directly through Ray:

- `pull()` -> (version, stop, ref): the version counts the updates applied; `ref` is an
  object-store reference to the shard's values, read and put once per version when
  first pulled, so every worker pulling that version reads the same shared-memory copy
  and versions nobody pulls cost nothing;
- `push(grads, updates, version, ...)` applies gradients. Asynchronous SGD: at once.
  Synchronous SGD (`replicas_to_aggregate=R`): as TF's ConditionalAccumulator, a
  gradient computed at an older version than this task's is stale and dropped; the
  first R fresh ones are averaged and applied, which advances the version and wakes
  the workers waiting in `wait_for_version`. Assignments forwarded from UPDATE_OPS
  (batch norm's moving averages) are applied at once in both modes, as TF1 runs them;
- every `save_steps` versions the task writes its checkpoint shard (checkpoints.py)
  and reports it in `stats()`; the driver commits the checkpoint when every shard of
  that step is written. `restore(prefix)` reloads the shard from a checkpoint.

Methods are `async`, so Ray runs them on one event loop: an update runs to completion
before the next call starts (no locks), and waiting workers cost no thread.
"""

from __future__ import annotations

import asyncio
import time

import numpy as np

from tensorflux._src.distribute.ps import checkpoints
from tensorflux._src.distribute.ps.model_layout import mean_metrics
from tensorflux._src.train import checkpoint_format


def make_optimizer(optimizer):
    """The optimizer to apply on a ps: an Optimizer, or what a factory returns; a
    SyncReplicasOptimizer contributes its wrapped optimizer (the ps does the syncing)."""
    from tensorflux._src.train.optimizer import Optimizer
    from tensorflux._src.train.sync_replicas_optimizer import SyncReplicasOptimizer

    if not isinstance(optimizer, Optimizer):
        optimizer = optimizer()
    if isinstance(optimizer, SyncReplicasOptimizer):
        optimizer = optimizer._opt
    return optimizer


def checkpoint_name(variable):
    """The variable's name in checkpoints. A partitioned variable in one piece (what
    TF's min_max_variable_partitioner makes of a small variable, as canned Estimators
    use on ps tasks) is saved whole under its full name (`dnn/logits/kernel`, not
    `.../part_0`), so a model built without the partitioner (a local Estimator, an
    evaluator) reads it; its slots likewise (`dnn/logits/kernel/Adagrad`)."""
    info = variable._get_save_slice_info()
    if info is None:
        return variable.op.name
    if list(info.full_shape) != list(info.var_shape):
        raise NotImplementedError(
            f"{variable.op.name!r} is one of several pieces of the partitioned variable "
            f"{info.full_name!r} (full shape {list(info.full_shape)}); parameter-server "
            f"training saves a partitioned variable only in one piece")
    return info.full_name


def _shard_apply(optimizer, layout, specs):
    """(global step, {name: variable}, {name: gradient placeholder}, apply op,
    [optimizer]) for this ps's shard: the variables under their model names and the
    optimizer's apply_gradients over them (which increments the global step)."""
    import tensorflux as tf

    step_name = layout.global_step or "global_step"
    step_spec = next((s for s in layout.variables if s.name == step_name), None)
    step_dtype = np.dtype(step_spec.dtype) if step_spec else np.int64
    global_step = tf.Variable(
        tf.zeros([], step_dtype), name=step_name, trainable=False,
        collections=[tf.GraphKeys.GLOBAL_VARIABLES, tf.GraphKeys.GLOBAL_STEP])
    variables = {s.name: tf.Variable(tf.zeros(s.shape, s.dtype), name=s.name,
                                     trainable=s.has_gradient)
                 for s in specs}
    grad_vars = [variables[s.name] for s in specs if s.has_gradient]
    grad_feeds = {v.op.name: tf.placeholder(v.dtype.base_dtype, v.shape,
                                            name="grad/" + v.op.name)
                  for v in grad_vars}
    opt = make_optimizer(optimizer)
    if grad_vars:
        apply = opt.apply_gradients([(grad_feeds[v.op.name], v) for v in grad_vars],
                                    global_step=global_step)
    else:  # a ps holding no trainable variable still counts the steps
        apply = global_step.assign_add(1).op
    return global_step, variables, grad_feeds, apply, [opt]


class ParameterServerTask:
    """The state and update rule of ps `task` (see the module docstring)."""

    def __init__(self, task, layout, optimizer, replicas_to_aggregate, checkpoint_dir,
                 basename, save_steps, run_id):
        self.task = task
        self.layout = layout
        self.replicas_to_aggregate = replicas_to_aggregate  # None: asynchronous SGD
        self.checkpoint_dir, self.basename = checkpoint_dir, basename
        self.save_steps = save_steps
        self.run_id = run_id
        self.specs = [s for s in layout.shard(task) if s.name != layout.global_step]
        self._build(optimizer)
        self._version = 0
        self._generation = 0
        self._stop = False
        self._last_step = None
        self._accumulated, self._count, self._pending_metrics = {}, 0, []
        self._params_ref = None
        self._saved = []  # (generation, step, entries, save id, time) not yet reported
        self._metrics_log = []  # (step, {metric: value}) on the chief, not yet reported
        self._counters = {"pushes": 0, "applied": 0, "stale_dropped": 0,
                          "gradients_accepted": 0, "after_last_step": 0, "bytes_in": 0}
        self._cond = None  # asyncio.Condition, made on the actor's event loop

    # -- the graph ----------------------------------------------------------------------------
    def _build(self, optimizer):
        import tensorflux as tf

        self.graph = tf.Graph()
        with self.graph.as_default():
            if hasattr(optimizer, "build_shard_apply"):  # e.g. an Estimator's model_fn
                built = optimizer.build_shard_apply(self.layout, self.specs)
            else:
                built = _shard_apply(optimizer, self.layout, self.specs)
            self.global_step, self.variables, self.grad_feeds, self.apply, opts = built
            model_vars = list(self.variables.values()) + [self.global_step]
            self.read = [v.read_value() for v in model_vars]
            self.read_step = self.global_step.read_value()
            self.updates = {}
            for s in self.specs:
                if s.update:
                    value = tf.placeholder(s.dtype, s.shape, name="update/" + s.name)
                    kind = {"Assign": tf.assign, "AssignAdd": tf.assign_add,
                            "AssignSub": tf.assign_sub}[s.update]
                    self.updates[s.name] = (value, kind(self.variables[s.name], value).op)
            self.loads = {}
            for v in model_vars:
                value = tf.placeholder(v.dtype.base_dtype, v.shape, name="load/" + v.op.name)
                self.loads[v.op.name] = (value, tf.assign(v, value).op)
            self.init = tf.global_variables_initializer()
            grad_vars = [self.variables[name] for name in self.grad_feeds]
            slots = {opt.get_slot(v, n) for opt in opts for n in opt.get_slot_names()
                     for v in grad_vars}
            slots.discard(None)
            layout_names = {s.name for s in self.layout.variables}
            others = [v for v in tf.global_variables()  # beta1_power, ...
                      if v not in slots and v not in model_vars
                      and v.op.name not in layout_names]  # another ps's variables
            saved = list(self.variables.values()) + sorted(slots, key=lambda v: v.op.name)
            if self.task == self.layout.chief_task:
                saved.append(self.global_step)
            if self.task == self.layout.non_slot_task:
                saved += others
            self.saved = {checkpoint_name(v): v.read_value() for v in saved}
            # A restore reads what this task saved plus the step and the non-slot
            # variables, which every ps keeps but only one saves.
            restored = {checkpoint_name(v): v for v in saved + [self.global_step] + others}
            self.saver = tf.train.Saver(var_list=restored)
        self.sess = tf.Session(graph=self.graph)

    def _changed(self, version=None):
        """After any write: the next pull reads the values again."""
        self._version = int(self.sess.run(self.read_step)) if version is None else version
        self._params_ref = None

    # -- lifecycle ------------------------------------------------------------------------------
    async def ready(self):
        return self.task

    async def load(self, values, step, generation):
        """Starts from the given model values ({name: ndarray}) at `step`; slots start
        at their initializers."""
        self._reset(generation)
        self.sess.run(self.init)
        feeds, ops = {}, []
        for name, value in values.items():
            if name in self.loads:
                feeds[self.loads[name][0]] = value
                ops.append(self.loads[name][1])
        feeds[self.loads[self.global_step.op.name][0]] = step
        ops.append(self.loads[self.global_step.op.name][1])
        self.sess.run(ops, feeds)
        self._changed()
        return self._version

    async def restore(self, prefix, generation):
        """Reloads this task's variables, slots and step from the checkpoint `prefix`."""
        self._reset(generation)
        self.sess.run(self.init)
        self.saver.restore(self.sess, prefix)
        self._changed()
        return self._version

    def _reset(self, generation):
        self._generation = generation
        self._stop = False
        self._accumulated, self._count, self._pending_metrics = {}, 0, []
        self._saved.clear()
        self._metrics_log.clear()

    async def resume(self, last_step):
        """Clears a stop request: the driver starts training up to `last_step`, after
        which this task applies no more gradients (so every ps stops at that step)."""
        self._stop = False
        self._last_step = last_step

    async def request_stop(self):
        """Workers see `stop` in their next pull or wait and finish their loop."""
        self._stop = True
        async with self._condition():
            self._condition().notify_all()

    def _condition(self):
        if self._cond is None:
            self._cond = asyncio.Condition()
        return self._cond

    # -- the worker-facing calls ------------------------------------------------------------
    async def pull(self):
        if self._params_ref is None:
            import ray

            *params, _ = self.sess.run(self.read)
            self._params_ref = ray.put(dict(zip(self.variables, params)))
        return self._version, self._stop, [self._params_ref]

    async def push(self, grads, updates, version, worker, metrics):
        """Gradients ({name: ndarray}) computed at `version` by `worker`; returns whether
        they were used (False: stale) and this task's version."""
        counters = self._counters
        counters["pushes"] += 1
        counters["bytes_in"] += sum(g.nbytes for g in grads.values())
        if self._last_step is not None and self._version >= self._last_step:
            counters["after_last_step"] += 1  # in flight when the job reached its end
            return False, self._version
        if updates:
            self._apply_updates(updates)
        if self.replicas_to_aggregate is None:
            counters["gradients_accepted"] += 1
            self._apply(grads, [metrics])
            return True, self._version
        if version != self._version:  # computed on parameters already replaced
            counters["stale_dropped"] += 1
            return False, self._version
        counters["gradients_accepted"] += 1
        for name, g in grads.items():
            if name in self._accumulated:
                self._accumulated[name] += g
            else:
                self._accumulated[name] = np.array(g)  # a writable copy
        self._pending_metrics.append(metrics)
        self._count += 1
        if self._count == self.replicas_to_aggregate:
            mean = {name: total / self._count for name, total in self._accumulated.items()}
            pending = self._pending_metrics
            self._accumulated, self._count, self._pending_metrics = {}, 0, []
            self._apply(mean, pending)
            async with self._condition():
                self._condition().notify_all()
        return True, self._version

    async def wait_for_version(self, version):
        """Returns (version, stop) once this task's version reaches `version` or a stop
        is requested: the barrier that ends a synchronous step."""
        cond = self._condition()
        async with cond:
            await cond.wait_for(lambda: self._version >= version or self._stop)
        return self._version, self._stop

    def _apply(self, grads, metrics):
        feeds = {}
        for name, placeholder in self.grad_feeds.items():
            if name not in grads:
                raise ValueError(f"ps task {self.task}: the push has no gradient for "
                                 f"{name!r}; received {sorted(grads)}")
            feeds[placeholder] = grads[name]
        self.sess.run(self.apply, feeds)
        self._changed(self._version + 1)  # apply_gradients incremented global_step
        self._counters["applied"] += 1
        if self.task == self.layout.chief_task:
            self._metrics_log.append((self._version, mean_metrics(metrics)))
        if self.save_steps and self._version % self.save_steps == 0:
            self._save_shard(self._version)

    def _apply_updates(self, updates):
        feeds, ops = {}, []
        for name, value in updates.items():
            placeholder, op = self.updates[name]
            feeds[placeholder] = value
            ops.append(op)
        self.sess.run(ops, feeds)
        self._params_ref = None

    # -- checkpoints -----------------------------------------------------------------------------
    def _save_shard(self, step, report=True):
        names = list(self.saved)
        values = self.sess.run([self.saved[n] for n in names])
        shard_id = checkpoints.save_id(self.run_id, self._generation, step)
        prefix = checkpoints.prefix_for(self.checkpoint_dir, self.basename, step)
        tensors = dict(zip(names, map(np.asarray, values)))
        entries = checkpoint_format.write_data_shard(prefix, self.task, self.layout.num_ps,
                                                     tensors, shard_id)
        if report:
            self._saved.append((self._generation, step, entries, shard_id, time.time()))
        return entries

    async def save(self, step):
        """Writes this task's shard of the checkpoint at `step` now and returns its
        entries (the driver's final save; not reported again by `stats`)."""
        return self._save_shard(step, report=False)

    # -- reporting ---------------------------------------------------------------------------------
    async def stats(self):
        """The version, and the counters, shards saved and metrics logged since the last
        call (each reported once)."""
        saved, self._saved = self._saved, []
        log, self._metrics_log = self._metrics_log, []
        counters, self._counters = self._counters, dict.fromkeys(self._counters, 0)
        return {"task": self.task, "version": self._version, "stop": self._stop,
                "generation": self._generation, "saved": saved, "metrics": log,
                "time": time.time(), "counters": counters}

    async def values(self):
        """{name: ndarray} of this task's model variables (not the slots)."""
        values = self.sess.run(self.read)
        return dict(zip(list(self.variables) + [self.global_step.op.name], values))
