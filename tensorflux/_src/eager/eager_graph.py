"""`EagerGraph`: the default graph while eager execution is on; it runs each op as it
is added.

Every TF1 wrapper (tf.add, tf.matmul, tf.nn.*, tf.layers.dense, optimizers...) creates
its ops through `op_builder.apply_op`, which converts inputs, resolves attrs, infers
shapes and hands the new Operation to `graph._add_op`. That is the one place eager
execution branches: this graph's `_add_op` runs the op at once (`execute.py`) and turns
its outputs into `EagerTensor`s holding the values, so wrappers work unchanged and
return values.

The graph keeps nothing: ops are not stored by name, names are not made unique (TF's
eager ops have no graph names either), control dependencies are no-ops (ops already
ran in program order) and collections stay empty (TF1 eager ignores them). An op keeps
its inputs only while a GradientTape records it (`tape.py`); otherwise they are dropped
once it ran, so a long loop does not keep every intermediate value alive.
"""

from __future__ import annotations

import contextlib

from tensorflux._src.eager import execute, fast_path, tape
from tensorflux._src.eager.eager_tensor import make_eager
from tensorflux._src.framework import errors
from tensorflux._src.framework import graph as _graph
from tensorflux._src.runtime.session import SessionState


class EagerGraph(_graph.Graph):
    """The eager context's graph (see the module docstring)."""

    _is_eager_graph = True

    def __init__(self):
        super().__init__()
        self._random_state = execute.RandomState()
        # Resources that live as long as the program: tf.data iterators, queues, tables.
        self._session_state = SessionState()

    def _fast_apply(self, op_type, name, kwargs, slow):
        """apply_op's entry: a learned op skips its bookkeeping (`fast_path.py`)."""
        return fast_path.apply(self, op_type, name, kwargs, slow)

    def _add_op(self, op):
        op_def = op.op_def
        if op_def.name in ("Placeholder", "PlaceholderV2"):
            raise RuntimeError("tf.placeholder() is not compatible with eager execution.")
        op._id = 0
        values = [_input_value(t) for t in op.inputs]
        learner = fast_path.learning()
        if learner is not None and (learner.op is not None or op_def.name != learner.op_type):
            learner = None  # an op made on the way (a converted constant)
        execute.last_kernel[0] = None
        outs = execute.execute(op, values, self._random_state, self._session_state)
        if learner is not None:
            learner.op, learner.inputs = op, op.inputs
            learner.kernel = execute.last_kernel[0]
        for i, t in enumerate(op.outputs):
            value = outs[i] if i < len(outs) else None
            make_eager(t, value)
            if t.dtype._is_ref_dtype:
                if op_def.is_variable:
                    t._ref_source = None
                else:  # Assign's output_ref: the variable it wrote
                    t._ref_source = _ref_source(op.inputs[0])
                    t._value = None
            elif value is not None and not t._shape.is_fully_defined():
                t._shape = t._shape.merge_with(tuple(value.shape)) \
                    if t._shape.ndims is not None else _as_shape(value.shape)
        if not tape.record(op):
            op._inputs = ()
        op._control_inputs = []

    # -- what graphs track and eager execution does not ----------------------------------
    def unique_name(self, name, mark_as_used=True) -> str:
        return self._name_stack + "/" + name if self._name_stack else name

    @contextlib.contextmanager
    def control_dependencies(self, control_inputs):
        yield

    def _control_inputs_for(self, input_ops):
        return []

    # TF1 eager keeps one collection: the global step (ResourceVariable adds itself to
    # GLOBAL_STEP even when executing eagerly), so get_or_create_global_step finds it.
    _KEPT_COLLECTIONS = ("global_step",)

    def add_to_collection(self, name, value):
        if name in self._KEPT_COLLECTIONS:
            self.__dict__.setdefault("_kept", {}).setdefault(name, []).append(value)

    def add_to_collections(self, names, value):
        for name in [names] if isinstance(names, str) else names:
            self.add_to_collection(name, value)

    def get_collection(self, name, scope=None):
        return list(self.__dict__.get("_kept", {}).get(name, ()))

    def get_collection_ref(self, name):
        if name in self._KEPT_COLLECTIONS:
            return self.__dict__.setdefault("_kept", {}).setdefault(name, [])
        return []

    def finalize(self):
        pass

    def as_graph_def(self, from_version=None, add_shapes=False):
        raise ValueError("as_graph_def is not supported when eager execution is enabled.")


def _input_value(t):
    if not getattr(t, "_is_eager", False):
        raise errors.InvalidArgumentError(
            None, None, f"Tensor {t.name} of a tf.Graph cannot be used when eager execution "
                        f"is enabled: it has no value (build and run it in a tf.Session).")
    if t._dtype._is_ref_dtype:
        source = _ref_source(t)
        tape.variable_accessed(source)
        return source._value
    return t._value


def _ref_source(t):
    source = getattr(t, "_ref_source", None)
    return t if source is None else source


def _as_shape(shape):
    from tensorflux._src.framework.tensor_shape import TensorShape
    return TensorShape(list(shape))
