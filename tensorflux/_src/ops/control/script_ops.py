"""`tf.py_func` and `tf.numpy_function`: Python functions as graph ops.

As in TF, the graph holds only a string: the op's `token` attr names the function in a
registry (TF's FuncRegistry, tokens "pyfunc_0", "pyfunc_1", ...). The registry holds
functions weakly; the graph they were created in keeps them alive.

PyFunc (stateful) and PyFuncStateless are `host` records: a run computes their inputs
in a compiled cluster, calls the function on numpy arrays, and goes on in the next
cluster. Their outputs have unknown shapes. The function's results are not converted:
as in TF, a result of another dtype than Tout is an InvalidArgumentError (the classic
"0-th value returned by pyfunc_0 is double, but expects float").

Neither op has a gradient (TF marks both NotDifferentiable); give one with
`tf.RegisterGradient` and `graph.gradient_override_map({"PyFunc": name})`.
"""

from __future__ import annotations

import itertools
import threading
import traceback
import weakref

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import errors
from tensorflux._src.framework import graph as _graph
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.registry import OpDef, REQUIRED, register

__all__ = ["py_func", "numpy_function"]


class FuncRegistry:
    """token -> Python function; tokens are what PyFunc ops store in their attrs."""

    def __init__(self):
        self._lock = threading.Lock()
        self._funcs = weakref.WeakValueDictionary()
        # Callables that cannot be weakly referenced (numpy's dispatchers, np.sort) are
        # held here for the life of the process.
        self._pinned = {}
        self._ids = itertools.count()

    def insert(self, func):
        with self._lock:
            token = f"pyfunc_{next(self._ids)}"
            try:
                self._funcs[token] = func
            except TypeError:
                self._pinned[token] = func
        return token

    def lookup(self, token):
        func = self._funcs.get(token) or self._pinned.get(token)
        if func is None:
            raise ValueError(f"callback {token} is not found")
        return func

    def size(self):
        return len(self._funcs) + len(self._pinned)


_py_funcs = FuncRegistry()

# How a Python exception raised by the function is reported (TF's py_func.cc).
_ERRORS = ((ValueError, errors.InvalidArgumentError), (TypeError, errors.InvalidArgumentError),
           (StopIteration, errors.OutOfRangeError), (MemoryError, errors.ResourceExhaustedError),
           (NotImplementedError, errors.UnimplementedError))

# The numpy types a result may have, as TF names them (others are Unimplemented).
_RESULT_DTYPES = {np.dtype(np.float16): _dtypes.float16, np.dtype(np.float32): _dtypes.float32,
                  np.dtype(np.float64): _dtypes.float64, np.dtype(np.int32): _dtypes.int32,
                  np.dtype(np.uint8): _dtypes.uint8, np.dtype(np.int8): _dtypes.int8,
                  np.dtype(np.int16): _dtypes.int16, np.dtype(np.int64): _dtypes.int64,
                  np.dtype(np.bool_): _dtypes.bool, np.dtype(np.complex64): _dtypes.complex64,
                  np.dtype(np.complex128): _dtypes.complex128,
                  np.dtype(object): _dtypes.string}

_TYPE_NAMES = {_dtypes.float32: "float", _dtypes.float64: "double"}  # DataTypeString


def _type_string(dtype):
    return _TYPE_NAMES.get(dtype, dtype.name)


def _exception_text(exc):
    """PyExceptionFetch: "Type: message", then the formatted traceback."""
    lines = traceback.format_exception(type(exc), exc, exc.__traceback__)
    return f"{type(exc).__name__}: {exc}\n" + "".join(line + "\n" for line in lines)


def _as_result_array(value):
    """FuncRegistry._convert: numpy, with text kept as an object array of bytes."""
    result = np.asarray(value, order="C")
    if result.dtype.char == "U":
        result = np.vectorize(lambda s: s.encode("utf-8"), otypes=[object])(result)
    elif result.dtype.char == "S":
        result = result.astype(object)
    return result


def _results(ret):
    """The function's return value as a list of arrays (a lone None means no results)."""
    if isinstance(ret, bytes):
        ret = [ret]
    if isinstance(ret, (tuple, list)):
        return [_as_result_array(x) for x in ret]
    ret = _as_result_array(ret)
    if ret.ndim == 0 and ret.dtype == object and ret[()] is None:
        return []
    return [ret]


def _call(*inputs, token, Tout):  # noqa: N803 - TF's attr name
    """The host kernel of PyFunc and PyFuncStateless."""
    func = _py_funcs.lookup(token)
    # Values coming out of XLA are read-only views; the function may write to its inputs.
    args = [x if x.flags.writeable else np.array(x) for x in inputs]
    try:
        ret = func(*args)
    except Exception as exc:  # noqa: BLE001 - every Python error becomes an OpError
        error = next((e for py, e in _ERRORS if isinstance(exc, py)), errors.UnknownError)
        raise error(None, None, _exception_text(exc)) from exc
    outs = _results(ret)
    if len(outs) != len(Tout):
        raise errors.InvalidArgumentError(
            None, None, f"{token} returns {len(outs)} values, but expects to see "
                        f"{len(Tout)} values.")
    for i, (value, want) in enumerate(zip(outs, Tout)):
        got = _RESULT_DTYPES.get(value.dtype)
        if got is None:
            raise errors.UnimplementedError(None, None,
                                            f"Unsupported numpy type {value.dtype.num}")
        if got != want:
            raise errors.InvalidArgumentError(
                None, None, f"{i}-th value returned by {token} is {_type_string(got)}, but "
                            f"expects {_type_string(want)}")
    return outs


for _op_type, _stateful in (("PyFunc", True), ("PyFuncStateless", False)):
    register(OpDef(
        _op_type, inputs=("input: list(Tin)",), outputs=("output: list(Tout)",),
        attrs={"Tin": _dtypes.ALL, "Tout": REQUIRED, "token": REQUIRED},
        host=_call, stateful=_stateful, not_differentiable=True,
    ))


def _internal_py_func(func, inp, Tout, stateful, name):  # noqa: N803
    if not callable(func):
        raise ValueError(f"Expected func to be callable, got func of type {type(func)}")
    is_list = isinstance(Tout, (list, tuple))
    dtypes = tuple(_dtypes.as_dtype(t) for t in (Tout if is_list else [Tout]))
    token = _py_funcs.insert(func)
    # The registry holds functions weakly: the graph keeps this one alive, as in TF.
    graph = _graph.graph_from_inputs(list(inp))
    if not hasattr(graph, "_py_funcs_used_in_graph"):
        graph._py_funcs_used_in_graph = []
    graph._py_funcs_used_in_graph.append(func)
    outputs = apply_op("PyFunc" if stateful else "PyFuncStateless", name=name,
                       input=list(inp), token=token, Tout=dtypes)
    if not outputs:  # no results: the generated wrapper returns the Operation
        return graph.get_operations()[-1]
    return outputs if is_list else outputs[0]


def py_func(func, inp, Tout, stateful=True, name=None):  # noqa: N803
    """An op computing `func(*numpy inputs)` on the host; Tout is a dtype (one tensor is
    returned) or a list of dtypes (a list is returned)."""
    return _internal_py_func(func, inp, Tout, stateful=stateful, name=name)


def numpy_function(func, inp, Tout, name=None):  # noqa: N803
    """`py_func` with stateful=True (TF's name for it from 1.14 on)."""
    return _internal_py_func(func, inp, Tout, stateful=True, name=name)
