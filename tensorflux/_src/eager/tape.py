"""`tf.GradientTape`: records eager ops on watched tensors and plays them back.

While a tape records, each op run by the eager graph whose inputs include a watched
tensor (or an output of an op the tape recorded) is kept on the tape, with its inputs
and outputs and their values. `gradient(target, sources)` then walks the recorded ops
in reverse, calling each op's gradient function (its OpDef's `grad`, or a
`tf.RegisterGradient` override) exactly as `tf.gradients` does in a graph. Those
functions build ordinary ops, which run eagerly, so an enclosing tape records them:
nested tapes give second and higher derivatives.

Variables: reading a variable is an op on its ref tensor (`Identity(v)`), so the
variable's ref tensor is the source of its gradient. `watch_accessed_variables=True`
(the default) watches every variable read while the tape records.
"""

from __future__ import annotations

import threading

from tensorflux._src.autodiff import gradients as _gradients
from tensorflux._src.eager.structures import flatten as _flatten
from tensorflux._src.eager.structures import pack as _pack
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.indexed_slices import IndexedSlices
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework.tensor_conversion import convert_to_tensor

_local = threading.local()


def _active():
    tapes = getattr(_local, "tapes", None)
    if tapes is None:
        tapes = _local.tapes = []
    return tapes


def record(op) -> bool:
    """Called by the eager graph after `op` ran: records it on every recording tape
    that watches one of its inputs. True when some tape kept it."""
    tapes = _active()
    if not tapes:
        return False
    kept = False
    for tape in tapes:
        if tape._recording and tape._records(op):
            kept = True
    return kept


def recording() -> bool:
    """Whether some tape of this thread is recording now."""
    return any(tape._recording for tape in _active())


def variable_accessed(ref_tensor):
    """A variable's buffer was read while eager: recording tapes that watch accessed
    variables watch it."""
    for tape in _active():
        if tape._recording and tape._watch_accessed_variables:
            tape._watch_tensor(ref_tensor)


class GradientTape:
    """Records operations for automatic differentiation (TF's tf.GradientTape)."""

    def __init__(self, persistent=False, watch_accessed_variables=True):
        self._persistent = persistent
        self._watch_accessed_variables = watch_accessed_variables
        self._recording = False
        self._used = False
        self._ops = []  # recorded ops, in execution order
        self._tensors = {}  # id -> tensor: watched tensors and outputs of recorded ops
        self._watched = {}  # id -> watched tensor (sources), in watch order
        self._variables = {}  # id of ref tensor -> Variable (for watched_variables)

    # -- context ------------------------------------------------------------------------
    def __enter__(self):
        self._push()
        return self

    def __exit__(self, *exc):
        if self._recording:
            self._pop()

    def _push(self):
        if self._recording:
            raise ValueError("Tape is still recording, This can happen if you try to "
                             "re-enter an already-active tape.")
        _active().append(self)
        self._recording = True

    def _pop(self):
        _active().remove(self)
        self._recording = False

    def stop_recording(self):
        """A context in which ops are not recorded on this tape."""
        tape = self

        class _Stop:
            def __enter__(self):
                if not tape._recording:
                    raise ValueError("Tape must be recording when stop_recording is called.")
                tape._pop()

            def __exit__(self, *exc):
                tape._push()

        return _Stop()

    def reset(self):
        """Clears what was recorded (still recording when inside the `with` block)."""
        self._ops.clear()
        self._tensors.clear()
        self._watched.clear()
        self._variables.clear()

    # -- watching -------------------------------------------------------------------------
    def watch(self, tensor):
        """Ensures `tensor` (a tensor, a variable, or a nest of them) is traced."""
        for t in _flatten(tensor):
            if hasattr(t, "_ref") and not isinstance(t, Tensor):  # a Variable
                ref = _ref_source(t._ref())
                self._variables[id(ref)] = t
                self._watch_tensor(ref)
                continue
            if not isinstance(t, Tensor):
                raise ValueError(f"Passed in object of type {type(t)}, not tf.Tensor")
            if not (t.dtype.is_floating or t.dtype.is_complex):
                continue  # TF: only floating tensors are watched (with a warning)
            self._watch_tensor(t)

    def _watch_tensor(self, t):
        self._tensors[id(t)] = t
        self._watched.setdefault(id(t), t)

    def watched_variables(self):
        """The variables this tape watched, in the order they were first watched."""
        out = []
        for key, t in self._watched.items():
            var = self._variables.get(key) or getattr(t, "_variable_object", None)
            var = var() if callable(var) and not hasattr(var, "_ref") else var
            if var is not None and var not in out:
                out.append(var)
        return out

    def _records(self, op) -> bool:
        if not any(id(t) in self._tensors for t in op.inputs):
            return False
        self._ops.append(op)
        for t in op.outputs:
            self._tensors[id(t)] = t
        return True

    # -- gradients -----------------------------------------------------------------------
    def gradient(self, target, sources, output_gradients=None,
                 unconnected_gradients=_gradients.UnconnectedGradients.NONE):
        """d(target)/d(sources), a nest like `sources` (None or zeros where unconnected)."""
        if self._used and not self._persistent:
            raise RuntimeError("GradientTape.gradient can only be called once on "
                               "non-persistent tapes.")
        try:
            unconnected = _gradients.UnconnectedGradients(unconnected_gradients)
        except ValueError:
            raise ValueError(f"Unknown value for unconnected_gradients: "
                             f"{unconnected_gradients!r}") from None
        was_recording = self._recording
        if was_recording:
            self._pop()  # the gradient ops of this tape are not recorded on it
        try:
            flat_sources = _flatten(sources)
            targets = [convert_to_tensor(t) for t in _flatten(target)]
            if output_gradients is not None:
                output_gradients = [None if g is None else convert_to_tensor(g)
                                    for g in _flatten(output_gradients)]
            if not all(t._is_eager for t in targets):
                # Graph mode (a tf.Graph, a function being traced): the ops are in a
                # graph already, so this is tf.gradients (TF1's tape records graph ops).
                grads = self._graph_gradients(targets, flat_sources, output_gradients,
                                              unconnected)
            else:
                source_tensors = [_source_tensor(s) for s in flat_sources]
                grads = self._backward(targets, source_tensors, output_gradients,
                                       unconnected)
        finally:
            if was_recording:
                self._push()
        if not self._persistent:
            self._used = True
            self._ops, self._tensors = [], {}
        return _pack(sources, grads)

    def _graph_gradients(self, targets, sources, output_gradients, unconnected):
        graph = _graph.get_default_graph()
        capture = getattr(graph, "capture_value", None)
        xs = []
        for s in sources:
            ref = s._ref() if hasattr(s, "_ref") and not isinstance(s, Tensor) else s
            xs.append(capture(ref) if capture is not None else ref)
        return _gradients.gradients(targets, xs, grad_ys=output_gradients,
                                    unconnected_gradients=unconnected)

    def _backward(self, targets, sources, output_gradients, unconnected):
        if output_gradients is None:
            output_gradients = [None] * len(targets)
        if len(output_gradients) != len(targets):
            raise ValueError(f"Passed {len(output_gradients)} output_gradients for "
                             f"{len(targets)} targets")
        from tensorflux._src.ops.array.generator_ops import ones_like
        pending = {}  # id(tensor) -> contributions
        for y, gy in zip(targets, output_gradients):
            if gy is None:
                gy = ones_like(y)
            elif gy.dtype.base_dtype != y.dtype.base_dtype:
                gy = convert_to_tensor(gy.numpy(), dtype=y.dtype.base_dtype)
            pending.setdefault(id(y), []).append(gy)
        source_ids = {id(s) for s in sources}
        # Ops on a path from a source to a target: forward over the tape from the sources,
        # then backward from the targets.
        reached = set(source_ids)
        forward = []
        for op in self._ops:
            if any(id(t) in reached for t in op.inputs):
                forward.append(op)
                reached.update(id(t) for t in op.outputs)
        needed = {id(t) for t in targets}
        between = []
        for op in reversed(forward):
            if any(id(t) in needed for t in op.outputs):
                between.append(op)
                needed.update(id(t) for t in op.inputs)
        for op in between:  # reverse execution order
            out_grads = [_gradients._aggregate(pending.get(id(t), []), name=None)
                         for t in op.outputs]
            if all(g is None for g in out_grads):
                continue
            if not any(_gradients._is_backpropagatable(t) for t in op.inputs):
                continue
            fn = _gradients._gradient_function(op)
            if fn is None:
                continue
            out_grads = [g if g is not None else _gradients._zeros_for(t)
                         for g, t in zip(out_grads, op.outputs)]
            in_grads = fn(op, *_gradients._densified(out_grads, fn))
            in_grads = list(in_grads) if isinstance(in_grads, (list, tuple)) else [in_grads]
            if len(in_grads) != len(op.inputs):
                raise ValueError(f"Num gradients {len(in_grads)} generated for op "
                                 f"{op.type} do not match num inputs {len(op.inputs)}")
            for t, g in zip(op.inputs, in_grads):
                if g is None or not _gradients._is_backpropagatable(t):
                    continue
                key = id(_ref_source(t)) if t.dtype._is_ref_dtype else id(t)
                if key in reached:
                    pending.setdefault(key, []).append(g)
        results = []
        for s in sources:
            g = _gradients._aggregate(pending.get(id(s), []), name=None)
            if g is None:
                if unconnected is _gradients.UnconnectedGradients.ZERO:
                    from tensorflux._src.ops.array.generator_ops import zeros
                    g = zeros(s.shape.as_list(), dtype=s.dtype.base_dtype)
            elif isinstance(g, IndexedSlices) and not s.dtype._is_ref_dtype:
                g = convert_to_tensor(g)
            results.append(g)
        return results

    def jacobian(self, target, sources, unconnected_gradients=_gradients.UnconnectedGradients.NONE,
                 parallel_iterations=None, experimental_use_pfor=True):
        """d(target)/d(sources) for every element of `target` (a loop over its rows)."""
        import numpy as np

        from tensorflux._src.ops.array import array_ops
        if not self._persistent and self._used:
            raise RuntimeError("GradientTape.gradient can only be called once on "
                               "non-persistent tapes.")
        target = convert_to_tensor(target)
        flat_sources = _flatten(sources)
        n = int(np.prod(target.shape.as_list()))
        persistent, self._persistent = self._persistent, True
        try:
            rows = []
            flat_target = array_ops.reshape(target, [-1]) if n else target
            for i in range(n):
                onehot = np.zeros([n], target.dtype.as_numpy_dtype)
                onehot[i] = 1
                rows.append(self.gradient(flat_target, flat_sources,
                                          output_gradients=[onehot],
                                          unconnected_gradients=unconnected_gradients))
        finally:
            self._persistent = persistent
            if not persistent:
                self._used = True
        out = []
        for j, s in enumerate(flat_sources):
            shape = target.shape.as_list() + _source_tensor(s).shape.as_list()
            if any(r[j] is None for r in rows):
                out.append(None)
                continue
            out.append(array_ops.reshape(array_ops.stack([r[j] for r in rows]), shape))
        return _pack(sources, out)


def _ref_source(t):
    source = getattr(t, "_ref_source", None)
    return t if source is None else source


def _source_tensor(s):
    if isinstance(s, Tensor):
        return _ref_source(s) if s.dtype._is_ref_dtype else s
    if hasattr(s, "_ref"):
        return _ref_source(s._ref())
    raise ValueError(f"Argument `sources` must be tensors or variables; got {s!r}")


def recording():
    return any(t._recording for t in _active())


def default_graph():
    return _graph.get_default_graph()
