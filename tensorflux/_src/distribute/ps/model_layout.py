"""What parameter-server training needs to know about a model, and where its variables go.

The user's `model_fn()` builds the model in a graph and returns its loss (a scalar
tensor) or a dict with "loss" and other scalars to report ("accuracy"). The driver
calls it once (`inspect_model`) and every worker calls it again to build its own copy;
both read the graph the same way (`ModelGraph`):

- the global variables, in creation order, each placed on a ps task by a
  `tf.train.replica_device_setter` device function (round-robin by default, or any
  `ps_strategy` such as `GreedyLoadBalancingStrategy`); a variable already placed on
  `/job:ps/task:k` stays there, as the device setter merges devices;
- which trainable variables have a gradient (the others are never updated);
- the model's `UPDATE_OPS` (batch norm's moving averages): assign ops whose *value*
  input the worker computes and the ps applies, as TF1 runs them on the ps;
- the global step variable, whose ps task is the chief ps (it owns the step counter
  that is checkpointed), and the ps that saves the optimizer's non-slot variables
  (Adam's `beta1_power`), that of the first trainable variable by name, as TF1
  colocates them.

The driver also runs the initializers once, so every ps starts from the same values.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from tensorflux._src.framework import device as pydev

UPDATE_KINDS = ("Assign", "AssignAdd", "AssignSub")


@dataclasses.dataclass(frozen=True)
class VariableSpec:
    name: str  # the VariableV2 op's name, which is also its checkpoint name
    shape: tuple
    dtype: str  # numpy dtype name
    task: int  # the ps task holding it
    has_gradient: bool
    update: str | None = None  # "AssignSub", ... when an UPDATE_OPS op writes it

    @property
    def nbytes(self):
        return int(np.prod(self.shape, dtype=np.int64)) * np.dtype(self.dtype).itemsize


@dataclasses.dataclass(frozen=True)
class ModelLayout:
    """The model's variables and their ps tasks (picklable: sent to every actor)."""

    variables: tuple  # VariableSpec, in creation order
    num_ps: int
    global_step: str | None  # the model's global step variable (None: it has none)
    chief_task: int  # the ps owning the global step
    non_slot_task: int  # the ps saving the optimizer's non-slot variables
    metric_names: tuple  # the scalars model_fn returned besides the loss

    def shard(self, task):
        return [v for v in self.variables if v.task == task]

    @property
    def placement(self):
        """{variable name: ps task}."""
        return {v.name: v.task for v in self.variables}

    @property
    def nbytes(self):
        return sum(v.nbytes for v in self.variables)

    @property
    def gradient_bytes(self):
        return sum(v.nbytes for v in self.variables if v.has_gradient)


@dataclasses.dataclass
class BuiltModel:
    """What a model_fn may return instead of the loss: the loss, the scalars to report,
    and `grads_and_vars`, the (gradient, variable) pairs to push when the model computed
    its own gradients (an Estimator's model_fn, through its optimizer: clipped, scaled,
    ...); None pushes tf.gradients of the loss for every trainable variable."""

    loss: object
    metrics: dict = dataclasses.field(default_factory=dict)
    grads_and_vars: list | None = None


class ModelGraph:
    """A model built by `model_fn`: its loss, metrics, variables, gradients, updates."""

    def __init__(self, model_fn):
        import tensorflux as tf

        scratch = tf.Graph()
        with scratch.as_default():
            built = model_fn()
        given = None
        if isinstance(built, BuiltModel):
            given = built.grads_and_vars
            built = {"loss": built.loss, **built.metrics}
        self.loss, self.metrics = _outputs(built)
        self.graph = self.loss.graph  # model_fn may build in a graph of its own
        with self.graph.as_default():
            self.variables = list(tf.global_variables())
            if given is None:
                trainable = [v for v in tf.trainable_variables() if v in self.variables]
                grads = tf.gradients(self.loss, trainable)
            else:
                trainable = [v for _, v in given]
                grads = [g for g, _ in given]
            # Workers push dense arrays (one placeholder per variable at the ps): sparse
            # gradients of embedding lookups are densified, so the ps applies them densely.
            grads = [tf.convert_to_tensor(g) if isinstance(g, tf.IndexedSlices) else g
                     for g in grads]
            self.gradients = {v.op.name: g for v, g in zip(trainable, grads) if g is not None}
            self.updates = _update_ops(tf.get_collection(tf.GraphKeys.UPDATE_OPS))
            step = tf.train.get_global_step(self.graph)
            self.global_step = step.op.name if step is not None else None
            self.local_init = tf.group(tf.local_variables_initializer(),
                                       tf.tables_initializer())
        if not self.gradients:
            raise ValueError(f"No gradients provided for any variable: the loss "
                             f"{self.loss.name} depends on none of the trainable variables "
                             f"{[v.op.name for v in trainable]}")
        self.by_name = {v.op.name: v for v in self.variables}

    def initial_values(self):
        """{name: ndarray} from the variables' initializers, run once."""
        import tensorflux as tf

        with tf.Session(graph=self.graph) as sess:
            with self.graph.as_default():
                sess.run(tf.variables_initializer(self.variables))
            values = sess.run([v.value() for v in self.variables])
        return {v.op.name: np.asarray(x) for v, x in zip(self.variables, values)}


def _outputs(built):
    from tensorflux._src.framework.operation import Tensor

    if isinstance(built, dict):
        if "loss" not in built:
            raise ValueError(f"model_fn returned a dict without a 'loss' entry; expected the "
                             f"loss tensor or {{'loss': tensor, 'accuracy': tensor, ...}}, "
                             f"received keys {sorted(built)}")
        outputs = dict(built)
    else:
        outputs = {"loss": built}
    for name, tensor in outputs.items():
        if not isinstance(tensor, Tensor) or tensor.shape.ndims not in (0, None):
            raise ValueError(f"model_fn must return scalar tensors; received {name}={tensor!r}")
    loss = outputs.pop("loss")
    return loss, outputs


def _update_ops(items):
    """[(variable op name, assign kind, value tensor)] for the UPDATE_OPS collection."""
    found, seen = [], set()

    def visit(op):
        if op in seen:
            return
        seen.add(op)
        if op.type in UPDATE_KINDS and op.inputs[0].op.op_def.is_variable:
            found.append((op.inputs[0].op.name, op.type, op.inputs[1]))
        elif op.type in ("NoOp", "Identity"):
            for dep in list(op.control_inputs) + [t.op for t in op.inputs]:
                visit(dep)
        else:
            raise NotImplementedError(
                f"UPDATE_OPS holds {op.name!r} of type {op.type}; parameter-server training "
                f"forwards only {', '.join(UPDATE_KINDS)} of a variable (what batch "
                f"normalization's moving averages use) to the ps")

    for item in items:
        visit(getattr(item, "op", item))
    return found


def inspect_model(model_fn, num_ps, ps_strategy=None):
    """(ModelLayout, initial values) for `model_fn` on `num_ps` ps tasks."""
    import tensorflux as tf

    model = ModelGraph(model_fn)
    device_fn = tf.train.replica_device_setter(ps_tasks=num_ps, ps_strategy=ps_strategy)
    updates = {name: kind for name, kind, _ in model.updates}
    specs = []
    for var in model.variables:
        device = pydev.parse(device_fn(var.op))
        if device.job != "ps" or device.task is None:
            raise ValueError(f"Variable {var.op.name!r} is placed on {var.op.device!r}; "
                             f"parameter-server training keeps every global variable on a "
                             f"ps task (expected '/job:ps' or no job in its device)")
        if device.task >= num_ps:
            raise ValueError(f"Variable {var.op.name!r} is placed on ps task {device.task}, "
                             f"but there are num_ps={num_ps} ps tasks (0-{num_ps - 1})")
        name = var.op.name
        specs.append(VariableSpec(name, tuple(var.shape.as_list()),
                                  np.dtype(var.dtype.base_dtype.as_numpy_dtype).name,
                                  int(device.task), name in model.gradients,
                                  updates.get(name)))
    by_name = {s.name: s for s in specs}
    chief = by_name[model.global_step].task if model.global_step else 0
    non_slot = by_name[min(model.gradients)].task
    layout = ModelLayout(tuple(specs), num_ps, model.global_step, chief, non_slot,
                         tuple(model.metrics))
    return layout, model.initial_values()


def mean_metrics(metrics):
    """The per-key mean of metric dicts ({name: float}); keys of the first dict."""
    if not metrics:
        return {}
    return {k: float(np.mean([m[k] for m in metrics if k in m])) for k in metrics[0]}
