"""`tf.train.SyncReplicasOptimizer`: synchronous SGD with backup workers, TF1's surface.

    opt = tf.train.SyncReplicasOptimizer(tf.train.AdamOptimizer(1e-3),
                                         replicas_to_aggregate=2, total_num_replicas=3)

Each step applies the mean of the first `replicas_to_aggregate` gradients computed on
the current parameters; gradients computed on older parameters are stale and dropped,
so `total_num_replicas - replicas_to_aggregate` workers are backups whose lateness
never delays a step. TF1 builds this from ConditionalAccumulators and a token queue on
the ps tasks. Here the two places it runs are:

- **Parameter-server training** (`tf.distribute.ParameterServerTraining(model_fn,
  optimizer=SyncReplicasOptimizer(...), num_workers=total_num_replicas)`): the ps
  tasks do the accumulating, staleness checks and barrier
  (`_src/distribute/ps/ps_task.py`); this object only carries the settings and the
  wrapped optimizer, whose update rule the ps tasks apply.
- **One process** (`opt.minimize(loss, global_step)` in an ordinary graph): the
  replicas are the program's successive runs of the train op. Each run adds its
  gradients to per-variable accumulators (`<var>/grad_accum`, local variables) and the
  run that brings the count to `replicas_to_aggregate` applies their mean with the
  wrapped optimizer and increments `global_step`, which is what TF1's accumulators do
  for a lone worker. With replicas_to_aggregate=1 it is the wrapped optimizer.

`make_session_run_hook(is_chief)` returns the hook TF1 programs pass to
`MonitoredTrainingSession`; it initializes the accumulators when the session starts.
"""

from __future__ import annotations

import logging

from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.graph_keys import GraphKeys
from tensorflux._src.framework.indexed_slices import IndexedSlices
from tensorflux._src.ops.control import control_ops
from tensorflux._src.ops.state import state_ops
from tensorflux._src.train.optimizer import Optimizer
from tensorflux._src.train.session_run_hook import SessionRunHook

__all__ = ["SyncReplicasOptimizer"]

_log = logging.getLogger("tensorflux")


def _positive_int(name, value):
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"SyncReplicasOptimizer: {name} must be a positive integer, "
                         f"received {name}={value!r}")
    return value


class SyncReplicasOptimizer(Optimizer):
    """Aggregates `replicas_to_aggregate` gradients per step (see the module docstring)."""

    def __init__(self, opt, replicas_to_aggregate, total_num_replicas=None,
                 variable_averages=None, variables_to_average=None, use_locking=False,
                 name="sync_replicas"):
        if not isinstance(opt, Optimizer):
            raise TypeError(f"SyncReplicasOptimizer wraps a tf.train.Optimizer; received "
                            f"opt={opt!r}")
        _positive_int("replicas_to_aggregate", replicas_to_aggregate)
        if total_num_replicas is None:
            total_num_replicas = replicas_to_aggregate
        _positive_int("total_num_replicas", total_num_replicas)
        if variable_averages is not None:
            raise NotImplementedError("SyncReplicasOptimizer(variable_averages=...) is not "
                                      "supported: tensorflux has no ExponentialMovingAverage")
        del variables_to_average  # only used with variable_averages
        super().__init__(use_locking, name)
        _log.info("SyncReplicasV2: replicas_to_aggregate=%s; total_num_replicas=%s",
                  replicas_to_aggregate, total_num_replicas)
        self._opt = opt
        self._replicas_to_aggregate = replicas_to_aggregate
        self._total_num_replicas = total_num_replicas
        self._gradients_applied = False
        self._global_step = None
        self._local_step = None
        self.local_step_init_op = None
        self.chief_init_op = None
        self.ready_for_local_init_op = None

    @property
    def replicas_to_aggregate(self):
        return self._replicas_to_aggregate

    @property
    def total_num_replicas(self):
        return self._total_num_replicas

    def compute_gradients(self, *args, **kwargs):
        """The wrapped optimizer's gradients (clip them per replica before applying)."""
        return self._opt.compute_gradients(*args, **kwargs)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """Adds this run's gradients to the accumulators; every `replicas_to_aggregate`-th
        run applies their mean and increments `global_step`. Returns the train op."""
        from tensorflux._src.train.optimizer import apply_gradients_recorder
        from tensorflux._src.train.variables import variables_initializer

        recorder = apply_gradients_recorder()
        if recorder is not None:  # an Estimator on parameter servers (it refuses this)
            return recorder(self, tuple(grads_and_vars), global_step, name)

        import tensorflux as tf

        grads_and_vars = tuple(grads_and_vars)
        if not grads_and_vars:
            raise ValueError("Must supply at least one variable")
        if global_step is None:
            raise ValueError("Global step is required to check staleness")
        self._global_step = global_step
        collections = [GraphKeys.LOCAL_VARIABLES]
        with _graph.control_dependencies(None):
            self._local_step = tf.Variable(0, trainable=False, collections=collections,
                                           dtype=global_step.dtype.base_dtype,
                                           name="sync_rep_local_step")
        self.local_step_init_op = state_ops.assign(self._local_step, global_step)
        if self._replicas_to_aggregate == 1:  # the mean of one gradient is the gradient
            train_op = self._opt.apply_gradients(grads_and_vars, global_step, name=name)
            local_vars = [self._local_step]
        else:
            train_op, local_vars = self._accumulate_then_apply(grads_and_vars, global_step,
                                                               name, collections)
        with _graph.control_dependencies([self.local_step_init_op]):
            self.chief_init_op = control_ops.group(
                variables_initializer([v for v in local_vars if v is not self._local_step]),
                name="sync_replicas_init")
        self._gradients_applied = True
        return train_op

    def _accumulate_then_apply(self, grads_and_vars, global_step, name, collections):
        import tensorflux as tf

        accumulators, adds = [], []
        with _graph.control_dependencies(None):
            count = tf.Variable(0, trainable=False, collections=collections,
                                name="sync_rep_count")
        for grad, var in grads_and_vars:
            if grad is None:
                continue
            with _graph.control_dependencies(None), _graph.device(var.device):
                accum = tf.Variable(tf.zeros(var.shape.as_list(), var.dtype.base_dtype),
                                    trainable=False, collections=collections,
                                    name=var.op.name + "/grad_accum")
            accumulators.append((accum, var))
            # TF1 gathers sparse gradients in a SparseConditionalAccumulator; here they are
            # scatter-added into the dense accumulator and their mean is applied densely.
            adds.append(state_ops.scatter_add(accum, grad.indices, grad.values)
                        if isinstance(grad, IndexedSlices) else accum.assign_add(grad))
        with _graph.control_dependencies(adds + [count.assign_add(1)]):
            ready = tf.greater_equal(count.read_value(), self._replicas_to_aggregate)

        def apply_mean():
            n = tf.cast(count.read_value(), accumulators[0][0].dtype.base_dtype)
            mean = [(accum.read_value() / n, var) for accum, var in accumulators]
            update = self._opt.apply_gradients(mean, global_step, name=name)
            with _graph.control_dependencies([update]):
                resets = [accum.assign(tf.zeros_like(accum)) for accum, _ in
                          accumulators]
                resets.append(count.assign(0))
                resets.append(self._local_step.assign(global_step.read_value()))
                return control_ops.group(*resets)

        train_op = tf.cond(ready, apply_mean, control_ops.no_op, name="sync_replicas_step")
        train_op = getattr(train_op, "op", train_op)
        train_ops = _graph.get_collection_ref(GraphKeys.TRAIN_OP)
        if train_op not in train_ops:
            train_ops.append(train_op)
        return train_op, [self._local_step, count] + [a for a, _ in accumulators]

    def get_chief_queue_runner(self):
        """TF1's token queue runner. No queue is needed here (module docstring): None."""
        if self._gradients_applied is False:
            raise ValueError("Should be called after apply_gradients().")
        return None

    def get_init_tokens_op(self, num_tokens=-1):
        """TF1 fills the token queue with it; here a no-op after TF's checks."""
        if self._gradients_applied is False:
            raise ValueError("get_init_tokens_op() should be called after apply_gradients().")
        tokens_needed = self._replicas_to_aggregate - self._total_num_replicas
        if num_tokens != -1 and num_tokens < tokens_needed:
            raise ValueError(f"Too few tokens to finish the first step: {num_tokens} (given) "
                             f"vs {tokens_needed} (needed)")
        return control_ops.no_op(name="no_init_tokens")

    def get_slot(self, *args, **kwargs):
        return self._opt.get_slot(*args, **kwargs)

    def get_slot_names(self, *args, **kwargs):
        return self._opt.get_slot_names(*args, **kwargs)

    def variables(self):
        """The wrapped optimizer's variables (not the accumulators or the local step)."""
        return self._opt.variables()

    def make_session_run_hook(self, is_chief, num_tokens=-1):
        """The hook that initializes the accumulators when the session is created."""
        return _SyncReplicasOptimizerHook(self, is_chief, num_tokens)


class _SyncReplicasOptimizerHook(SessionRunHook):
    def __init__(self, sync_optimizer, is_chief, num_tokens):
        self._sync_optimizer = sync_optimizer
        self._is_chief = is_chief
        self._num_tokens = num_tokens
        self._init_op = None

    def begin(self):
        if self._sync_optimizer._gradients_applied is False:
            raise ValueError("SyncReplicasOptimizer.apply_gradient should be called before "
                             "using the hook.")
        opt = self._sync_optimizer
        if self._is_chief:
            opt.get_init_tokens_op(self._num_tokens)  # TF's checks of num_tokens
            self._init_op = opt.chief_init_op
        else:
            self._init_op = opt.local_step_init_op

    def after_create_session(self, session, coord):
        session.run(self._init_op)
