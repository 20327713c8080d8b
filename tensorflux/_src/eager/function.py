"""`tf.contrib.eager.defun` / `tf.function`: a Python function traced into a graph once
per input signature and run compiled through a Session (the graph path's compiler).

Tracing runs the function with the default graph set to a `TraceGraph`: tensor
arguments become placeholders, and eager values it touches are captured:

- an eager tensor (immutable) becomes a constant of the trace;
- an eager variable becomes a *mirror* VariableV2 of the trace graph. Before each call
  the mirror's session buffer is the eager variable's buffer (no copy); after the call
  the eager variable takes whatever the run left there (the updated, donated buffer),
  so a step's optimizer updates land in place, as in a graph-mode Session step;
- variables created while tracing (an optimizer's slots on its first apply, a layer
  built inside the function) are created eagerly, outside the trace (TF's init_scope),
  and then captured like any other.

Signatures: each tensor or numpy argument counts by (dtype, shape), anything else by
value (Python numbers and flags retrace, as TF's do). Outputs are returned as eager
tensors in the structure the function returned (None and operations give None).

Under a recording GradientTape the function runs eagerly instead, op by op, so the tape
records its ops and gradients flow through it.
"""

from __future__ import annotations

import functools

import numpy as np

from tensorflux._src.eager import fast_path
from tensorflux._src.eager import tape as _tape
from tensorflux._src.eager.eager_tensor import EagerTensor
from tensorflux._src.eager.structures import flatten as _flatten
from tensorflux._src.eager.structures import pack as _pack
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.operation import Operation, Tensor
from tensorflux._src.runtime.session import Session

_EFFECTS = ("Assert", "Print", "PrintV2")


class TraceGraph(_graph.Graph):
    """The graph a function is traced into (see the module docstring)."""

    lift_variables = True  # Variable() made while tracing is made in outer_graph

    def __init__(self, outer_graph, name):
        super().__init__()
        self.outer_graph = outer_graph
        self.name = name
        self.seed = outer_graph.seed
        self.mirrors = {}  # id(eager ref source) -> (eager ref source, mirror ref tensor)
        self.constants = {}  # id(eager tensor) -> (eager tensor, constant here)

    def capture_value(self, value):
        if isinstance(value, (list, tuple)):
            return type(value)(self.capture_value(v) for v in value)
        if not isinstance(value, Tensor) and hasattr(value, "_as_graph_element"):
            element = value._as_graph_element()
            if isinstance(element, Tensor) and element.graph is not self:
                value = element
        if not isinstance(value, EagerTensor):
            return value
        from tensorflux._src.ops import constant
        from tensorflux._src.ops.state import state_ops
        with self.as_default(), self.name_scope(None):
            if value.dtype._is_ref_dtype:
                source = getattr(value, "_ref_source", None) or value
                entry = self.mirrors.get(id(source))
                if entry is None:
                    mirror = state_ops.variable_op(source.shape, source.dtype.base_dtype,
                                                   name=source.op.name + "_mirror")
                    entry = self.mirrors[id(source)] = (source, mirror)
                return entry[1]
            entry = self.constants.get(id(value))
            if entry is None:
                entry = self.constants[id(value)] = (
                    value, constant.constant(value.numpy(), dtype=value.dtype,
                                             name="captured"))
            return entry[1]


def _is_tensor_like(v):
    return isinstance(v, (Tensor, np.ndarray)) or hasattr(v, "_ref")


def _signature(args, kwargs):
    key = []
    for v in _flatten([list(args), kwargs]):
        if isinstance(v, Tensor):
            key.append(("T", v.dtype.base_dtype, tuple(v.shape.as_list())))
        elif isinstance(v, np.ndarray):
            key.append(("A", v.dtype.str, v.shape))
        elif hasattr(v, "_ref"):  # a variable argument: captured by identity
            key.append(("V", id(v)))
        else:
            try:
                hash(v)
                key.append(("P", type(v).__name__, v))
            except TypeError:
                key.append(("O", id(v)))
    return tuple(key) + (tuple(sorted(kwargs)),)


class _Concrete:
    """One traced signature: its graph, Session, feeds and fetches."""

    def __init__(self, fn, args, kwargs, name):
        outer = _graph.get_default_graph()
        self.graph = TraceGraph(outer, name)
        flat_in = _flatten([list(args), kwargs])
        self.feeds = []  # positions of flat inputs fed through placeholders
        placeholders = []
        from tensorflux._src.ops import constant
        with self.graph.as_default():
            traced_flat = []
            for i, v in enumerate(flat_in):
                if isinstance(v, EagerTensor) and not v.dtype._is_ref_dtype or \
                        isinstance(v, np.ndarray):
                    dtype = v.dtype if isinstance(v, Tensor) else None
                    if dtype is None:
                        from tensorflux._src.framework import dtypes
                        dtype = dtypes.as_dtype(v.dtype)
                    p = constant.placeholder(dtype.base_dtype, list(np.shape(v)),
                                             name=f"input_{i}")
                    self.feeds.append(i)
                    placeholders.append(p)
                    traced_flat.append(p)
                else:
                    traced_flat.append(v)
            t_args, t_kwargs = _pack([list(args), kwargs], traced_flat)
            outputs = fn(*t_args, **t_kwargs)
        self.placeholders = placeholders
        self.structure = outputs
        flat_out = _flatten(outputs)
        self.fetch_index = []
        fetches = []
        for j, o in enumerate(flat_out):
            if isinstance(o, (Tensor, Operation)) or hasattr(o, "_as_graph_element"):
                if hasattr(o, "_ref") and not isinstance(o, Tensor):
                    o = o.value()
                self.fetch_index.append(j)
                fetches.append(o)
        # As TF's automatic control dependencies: every stateful op the function made
        # runs (an optimizer's updates, assigns, prints), fetched or not.
        fetched_ops = {f.op if isinstance(f, Tensor) else f for f in fetches}
        self.side_effects = [op for op in self.graph.get_operations()
                             if (op.op_def.writes or op.type in _EFFECTS)
                             and op not in fetched_ops]
        self.n_out = len(flat_out)
        self.flat_out = flat_out
        self.fetches = fetches
        self.session = Session(graph=self.graph)
        self.mirrors = list(self.graph.mirrors.values())
        self.graph.finalize()
        # The run is prepared once per trace (Session.make_callable's work): the feeds'
        # shapes are the signature's, so the executable never changes.
        feed_key = tuple((p, tuple(p.shape.as_list())) for p in placeholders)
        self.run = self.session._run_for([self.fetches, self.side_effects], feed_key)
        self.out_dtypes = [None if isinstance(f, Operation) else f.dtype.base_dtype
                           for f in fetches]

    def __call__(self, args, kwargs):
        flat_in = _flatten([list(args), kwargs])
        feeds = []
        for p, i in zip(self.placeholders, self.feeds):
            v = flat_in[i]
            # An eager tensor is fed as its device buffer: no host round trip.
            feeds.append(v._value if isinstance(v, EagerTensor) else
                         np.asarray(v, p.dtype.as_numpy_dtype))
        state = self.session._state
        store = state.variables
        for source, mirror in self.mirrors:
            store[mirror.op] = source._read()
        try:
            values = self.run.rebuild(self.run.executable.run_device(feeds, state))[0]
        finally:
            for source, mirror in self.mirrors:
                value = store.get(mirror.op)
                if value is not None:
                    source._value = value
        outer = _graph.get_default_graph()
        flat = [None] * self.n_out
        for j, fetch, dtype, value in zip(self.fetch_index, self.fetches, self.out_dtypes,
                                          values):
            if dtype is not None and value is not None:
                flat[j] = fast_path.wrap(outer, fetch.op.name, value, dtype)
        for j, o in enumerate(self.flat_out):
            if j not in self.fetch_index:
                flat[j] = o
        return _pack(self.structure, flat)


class Function:
    """A Python function run as compiled graphs, one per input signature."""

    def __init__(self, python_function, name=None, input_signature=None):
        self._python_function = python_function
        self._name = name or getattr(python_function, "__name__", "function")
        self._input_signature = input_signature
        self._concrete = {}
        functools.update_wrapper(self, python_function)

    @property
    def python_function(self):
        return self._python_function

    def __call__(self, *args, **kwargs):
        if not getattr(_graph.get_default_graph(), "_is_eager_graph", False):
            # In a graph being built (a tf.Graph, another trace): the ops go in there.
            return self._python_function(*args, **kwargs)
        if _tape.recording():
            # A recording GradientTape must see the function's ops: they run eagerly,
            # one by one, so the tape records them (TF records one call op with a
            # compiled backward function; here the compiled speed is lost under a tape).
            return self._python_function(*args, **kwargs)
        key = _signature(args, kwargs)
        concrete = self._concrete.get(key)
        if concrete is None:
            concrete = self._concrete[key] = _Concrete(self._python_function, args, kwargs,
                                                       self._name)
        return concrete(args, kwargs)

    def __get__(self, instance, owner):
        if instance is None:
            return self
        return functools.partial(self.__call__, instance)

    def get_concrete_function(self, *args, **kwargs):
        key = _signature(args, kwargs)
        if key not in self._concrete:
            self._concrete[key] = _Concrete(self._python_function, args, kwargs, self._name)
        return self._concrete[key]


def defun(func=None, input_signature=None, autograph=True, experimental_autograph_options=None,
          experimental_relax_shapes=False):
    """`tf.contrib.eager.defun`: compiles `func` (see the module docstring)."""
    if func is None:
        return lambda f: Function(f, input_signature=input_signature)
    return Function(func, input_signature=input_signature)


def function(func=None, input_signature=None, autograph=True, experimental_autograph_options=None,
             experimental_relax_shapes=False, experimental_compile=None):
    """`tf.function` (TF 1.14+): the same as defun here."""
    return defun(func, input_signature=input_signature)
