"""Run-time checks and printing: `tf.Assert`, `tf.check_numerics`, `tf.Print`, `tf.print`.

These ops stay inside compiled clusters: their lowerings hand a traced condition or
values to `compiler/effects.py`, which fails the run (after it executed, keeping the
variables at their old values) or calls back into Python with the values. They are
`stateful` records, so they are never folded away or merged with a twin.

Strings in `data` (the "Condition x == y did not hold" texts) are kept in the op's
`string_data` attr instead of becoming string tensors: a string input would make the
op a host step (XLA has no strings) and cut its cluster in two. Each `string_data`
entry is the text of one data item, or None where the next tensor input goes.

The asserts built from these (`tf.debugging.assert_equal`, ...) are in check_ops.py.
"""

from __future__ import annotations

import sys
import weakref

import jax
import jax.numpy as jnp
import numpy as np

from tensorflux._src.compiler import effects
from tensorflux._src.framework import dispatch as _dispatch
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import errors
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.array.array_ops import identity
from tensorflux._src.ops.control.control_ops import group
from tensorflux._src.ops.debug import tensor_format
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.registry import OpDef, REQUIRED, register
from tensorflux._src.ops.shape_fns import unchanged

__all__ = ["Assert", "Print", "print", "check_numerics", "verify_tensor_all_finite",
           "add_check_numerics_ops"]

_SUMMARIZE = 3  # TF's default for the `summarize` attrs


# -- shared helpers -----------------------------------------------------------------------
def _tracing() -> bool:
    """True while JAX traces a compiled cluster (constants are staged, not computed)."""
    return isinstance(jnp.zeros((), jnp.bool_), jax.core.Tracer)


def _emit_each_run(callback, values):
    """`effects.emit`, made to fire on every run of a compiled cluster.

    effects.emit calls back at once when its data is static (numpy), which inside a
    cluster trace means once, at trace time, instead of after each run (a print of
    constants, or of no tensors at all). While tracing, the values are therefore turned
    into traced arrays (a dummy scalar when there are none), so they come back as
    outputs of the executable and the callback runs after every run.
    """
    values = list(values)
    if _tracing():
        values = [jnp.asarray(v) for v in values]
        if not values:
            values, inner = [jnp.zeros((), jnp.bool_)], callback

            def callback(_anchor):
                inner()
    effects.emit(callback, data=values)


def _head(value, summarize):
    """The leading elements SummarizeValue prints: only these leave a compiled cluster."""
    n = tensor_format.limit_for(int(np.prod(np.shape(value))), summarize)
    if isinstance(value, np.ndarray):
        return value.reshape(-1)[:n]
    return jnp.reshape(value, (-1,))[:n]


def _constant_text(item):
    """The text of a data item that is a Python string or a string constant, else None."""
    if isinstance(item, (str, bytes)):
        return item
    if (isinstance(item, Tensor) and item.op.type == "Const"
            and item.dtype.base_dtype == _dtypes.string and item.shape.ndims == 0):
        return item.op.get_attr("value")[()]
    return None


def _split_data(data):
    """(string_data attr, tensors): constant texts go to the attr, the rest are inputs."""
    if isinstance(data, Tensor) or not hasattr(data, "__iter__"):
        raise TypeError(f"Expected list for 'data' argument, not {data!r}.")
    string_data, tensors = [], []
    for item in data:
        text = _constant_text(item)
        string_data.append(text)
        if text is None:
            tensors.append(convert_to_tensor(item))
    return tuple(string_data), tensors


def _data_texts(string_data, metas, summarize, heads):
    """Each data item summarized as TF's kernels print it ([..] added by the caller)."""
    heads = iter(heads)
    metas = iter(metas)
    texts = []
    for text in string_data:
        if text is not None:
            texts.append(tensor_format.cescape(text))
        else:
            shape, dtype = next(metas)
            texts.append(tensor_format.summarize_v1(next(heads), shape, dtype, summarize))
    return texts


def _write(stream, text):
    stream.write(text)
    stream.flush()


# -- Assert --------------------------------------------------------------------------------
def _assert_lower(condition, *data, T, summarize, string_data):
    if np.ndim(condition) != 0:
        dims = ",".join(str(d) for d in np.shape(condition))
        raise errors.InvalidArgumentError(None, None, f"In[0] should be a scalar: [{dims}]")
    metas = [(np.shape(d), dtype) for d, dtype in zip(data, T)]

    def message(*heads):
        texts = _data_texts(string_data, metas, summarize, heads)
        return "assertion failed: " + " ".join(f"[{t}]" for t in texts)

    effects.check(condition, message, data=[_head(d, summarize) for d in data])
    return ()


register(OpDef(
    "Assert", inputs=("condition: bool", "data: list(T)"), outputs=(),
    attrs={"T": _dtypes.ALL, "summarize": _SUMMARIZE, "string_data": ()},
    lower=_assert_lower, stateful=True, not_differentiable=True,
))


def Assert(condition, data, summarize=None, name=None):  # noqa: N802 - TF's public name
    """Fails the run with InvalidArgumentError("assertion failed: [data]...") unless
    `condition` (a scalar bool) holds; returns the Operation (run it or depend on it)."""
    with _graph.name_scope(name, "Assert", [condition, data]):
        string_data, tensors = _split_data(data)
        attrs = {} if summarize is None else {"summarize": summarize}
        if all(t.dtype.base_dtype in (_dtypes.int32, _dtypes.string) for t in tensors):
            return apply_op("Assert", name="Assert", condition=condition, data=tensors,
                            string_data=string_data, **attrs)
        # TF guards asserts with other data in a cond named AssertGuard (to avoid copying
        # the data to the host); the node keeps that name, so errors name the same node.
        with _graph.name_scope("AssertGuard"):
            return apply_op("Assert", name="Assert", condition=condition, data=tensors,
                            string_data=string_data, **attrs)


# -- Print ---------------------------------------------------------------------------------
# How many times each Print op printed. TF's kernel counts per kernel instance, i.e. per
# op and session; callbacks cannot tell sessions apart, so here the count is per op: a
# new Session running the same graph does not print the first `first_n` times again.
_print_counts = weakref.WeakKeyDictionary()


def _print_lower(input, *data, U, message, first_n, summarize, string_data):  # noqa: A002
    metas = [(np.shape(d), dtype) for d, dtype in zip(data, U)]
    op = effects.current_op()

    def show(*heads):
        if first_n >= 0:
            if _print_counts.get(op, 0) >= first_n:
                return
            _print_counts[op] = _print_counts.get(op, 0) + 1
        texts = _data_texts(string_data, metas, summarize, heads)
        _write(sys.stderr, message + "".join(f"[{t}]" for t in texts) + "\n")

    _emit_each_run(show, [_head(d, summarize) for d in data])
    return input


def _print_grad(op, grad):
    return [grad] + [None] * (len(op.inputs) - 1)


register(OpDef(
    "Print", inputs=("input: T", "data: list(U)"), outputs=("output: T",),
    attrs={"T": _dtypes.ALL, "U": _dtypes.ALL, "message": "", "first_n": -1,
           "summarize": _SUMMARIZE, "string_data": ()},
    shape=unchanged, lower=_print_lower, grad=_print_grad, stateful=True,
))


def Print(input_, data, message=None, first_n=None, summarize=None, name=None):  # noqa: N802
    """Identity of `input_` that prints `message` and `data` to stderr when it runs."""
    string_data, tensors = _split_data(data)
    attrs = {k: v for k, v in (("message", message), ("first_n", first_n),
                               ("summarize", summarize)) if v is not None}
    return apply_op("Print", name=name, input=input_, data=tensors, string_data=string_data,
                    **attrs)


# -- tf.print ------------------------------------------------------------------------------
def _print_v2_lower(*inputs, T, template, placeholder, summarize, output_stream, end,
                    preformatted):
    def show(*values):
        if preformatted:  # a single string scalar, printed as it is
            text = values[0][()]
            text = text.decode("utf-8", "replace") if isinstance(text, bytes) else str(text)
        else:
            pieces = template.split(placeholder)
            formatted = [tensor_format.summarize_v2(v, dtype, summarize)
                         for v, dtype in zip(values, T)]
            text = pieces[0] + "".join(f + p for f, p in zip(formatted, pieces[1:]))
        _write_to(output_stream, text + end)

    _emit_each_run(show, inputs)
    return ()


def _write_to(output_stream, text):
    if output_stream.startswith("file://"):
        with open(output_stream[len("file://"):], "a") as f:  # TF appends to the file
            f.write(text)
        return
    _write(sys.stdout if output_stream == "stdout" else sys.stderr, text)


# TF's tf.print is StringFormat (a string tensor) feeding PrintV2. Here one op formats
# and prints, so tensors never become strings and the print stays in its cluster.
register(OpDef(
    "PrintV2", inputs=("inputs: list(T)",), outputs=(),
    attrs={"T": _dtypes.ALL, "template": "{}", "placeholder": "{}", "summarize": _SUMMARIZE,
           "output_stream": "stderr", "end": "\n", "preformatted": False},
    lower=_print_v2_lower, stateful=True, not_differentiable=True,
))


def _stream_name(output_stream):
    if isinstance(output_stream, str) and output_stream.startswith("file://"):
        return output_stream
    if output_stream is sys.stdout:
        return "stdout"
    if output_stream is sys.stderr:
        return "stderr"
    raise ValueError("Unsupported output stream, logging level, or file." + str(output_stream)
                     + ". Supported streams are sys.stdout, sys.stderr, tf.logging.info, "
                     "tf.logging.warning, tf.logging.error. File needs to be in the form of "
                     "'file://<filepath>'.")


def _placeholder_for(text, default="{}"):
    """A placeholder that does not occur in `text` (TF draws digits from Random(5))."""
    import random
    placeholder, rng = default, random.Random(5)
    while placeholder in text:
        placeholder += str(rng.randint(0, 9))
    return placeholder


def _flatten(structure):
    """nest.flatten for lists, tuples and dicts (dict values in sorted key order)."""
    if isinstance(structure, dict):
        return [x for k in sorted(structure) for x in _flatten(structure[k])]
    if isinstance(structure, (list, tuple)):
        return [x for item in structure for x in _flatten(item)]
    return [structure]


def _pack(structure, flat):
    """nest.pack_sequence_as: `flat` (an iterator) poured back into `structure`."""
    if isinstance(structure, dict):
        return {k: _pack(structure[k], flat) for k in sorted(structure)}
    if isinstance(structure, (list, tuple)):
        return type(structure)(_pack(item, flat) for item in structure)
    return next(flat)


def _is_tensor(x):
    return isinstance(x, Tensor) or hasattr(x, "_as_graph_element")


def _print_template(inputs, sep):
    """TF's tf.print template: Python values written with pprint, "{}" for tensors."""
    import pprint
    free = [_pack(x, iter(["" if _is_tensor(v) else v for v in _flatten(x)]))
            for x in inputs]
    placeholder = _placeholder_for(" ".join(pprint.pformat(x) for x in free))
    templates, tensors = [], []
    for x in inputs:
        slots = []
        for v in _flatten(x):
            if _is_tensor(v):
                tensors.append(convert_to_tensor(v))
                slots.append(placeholder)
            else:
                slots.append(v)
        templates.append(x if isinstance(x, str) else
                         pprint.pformat(_pack(x, iter(slots))))
    template = sep.join(templates).replace("'" + placeholder + "'", placeholder)
    return template, placeholder, tensors


def print(*inputs, **kwargs):  # noqa: A001 - TF's public name
    """`tf.print(*inputs, output_stream=sys.stderr, summarize=3, sep=" ", end="\\n",
    name=None)`: an op printing tensors (numpy style) and Python values when it runs."""
    output_stream = kwargs.pop("output_stream", sys.stderr)
    name = kwargs.pop("name", None)
    summarize = kwargs.pop("summarize", 3)
    sep = kwargs.pop("sep", " ")
    end = kwargs.pop("end", "\n")
    if kwargs:
        raise ValueError(f"Unrecognized keyword arguments for tf.print: {kwargs}")
    stream = _stream_name(output_stream)
    summarize = _SUMMARIZE if summarize is None else summarize
    first = inputs[0] if len(inputs) == 1 else None
    if (_is_tensor(first) and convert_to_tensor(first).dtype.base_dtype == _dtypes.string
            and convert_to_tensor(first).shape.ndims == 0):
        return apply_op("PrintV2", name=name, inputs=[first], output_stream=stream, end=end,
                        preformatted=True)
    template, placeholder, tensors = _print_template(inputs, sep)
    return apply_op("PrintV2", name=name, inputs=tensors, template=template,
                    placeholder=placeholder, summarize=summarize, output_stream=stream,
                    end=end)


# -- check_numerics ------------------------------------------------------------------------
_INF, _NAN = 1, 2  # TF's kInfBit, kNaNBit


def _non_finite_bits(tensor):
    """_INF | _NAN bits of the non-finite values present, in one reduction."""
    if isinstance(tensor, np.ndarray):  # static: stays numpy, so a failure shows at once
        kinds = np.where(np.isnan(tensor), _NAN, np.where(np.isinf(tensor), _INF, 0))
        return np.bitwise_or.reduce(kinds.reshape(-1).astype(np.int32), initial=0)
    kinds = jnp.where(jnp.isnan(tensor), _NAN, jnp.where(jnp.isinf(tensor), _INF, 0))
    return jax.lax.reduce(kinds.astype(jnp.int32), np.int32(0), jax.lax.bitwise_or,
                          tuple(range(kinds.ndim)))


def _check_numerics_lower(tensor, message):
    bits = _non_finite_bits(tensor)

    def error_text(bits):
        status = {_INF: "Inf", _NAN: "NaN", _INF | _NAN: "Inf and NaN"}[int(bits)]
        return f"{message} : Tensor had {status} values"

    effects.check(bits == 0, error_text, data=(bits,))
    return tensor


def _check_numerics_grad(op, grad):
    return [check_numerics(grad, "Not a number (NaN) or infinity (Inf) values detected in "
                                 "gradient. %s" % op.get_attr("message"))]


register(OpDef(
    "CheckNumerics", inputs=("tensor: T",), outputs=("output: T",),
    attrs={"T": (_dtypes.bfloat16, _dtypes.float16, _dtypes.float32, _dtypes.float64),
           "message": REQUIRED},
    shape=unchanged, lower=_check_numerics_lower, grad=_check_numerics_grad, stateful=True,
))


def check_numerics(tensor, message, name=None):
    """Identity of `tensor`; fails the run with "message : Tensor had NaN values" (or Inf)
    when it has non-finite values."""
    return apply_op("CheckNumerics", name=name, tensor=tensor, message=message)


def verify_tensor_all_finite(t=None, msg=None, name=None, x=None, message=None):
    """`t` after a check_numerics of it (also `tf.debugging.assert_all_finite`)."""
    x = t if x is None else x
    message = msg if message is None else message
    with _graph.name_scope(name, "VerifyFinite", [x]):
        x = convert_to_tensor(x, name="x")
        verify_input = check_numerics(x, message=message)
        with _graph.name_scope(None, "control_dependency", [verify_input, x]) as scope:
            with _graph.control_dependencies([verify_input]):
                return identity(x, name=scope)


def add_check_numerics_ops():
    """A group of CheckNumerics over every float16/32/64 tensor now in the default graph,
    chained by control dependencies as TF1 does."""
    checks = []
    for op in _graph.get_default_graph().get_operations():
        for output in op.outputs:
            if output.dtype in (_dtypes.float16, _dtypes.float32, _dtypes.float64):
                if getattr(op, "_body", None) is not None:
                    raise ValueError("`tf.add_check_numerics_ops() is not compatible with "
                                     "TensorFlow control flow operations such as `tf.cond()` "
                                     "or `tf.while_loop()`.")
                message = f"{op.name}:{output.value_index}"
                with _graph.control_dependencies(checks):
                    checks = [check_numerics(output, message=message)]
    return group(*checks)


# RaggedTensor (and other composite) arguments dispatch to registered handlers
# (framework/dispatch.py; TF's ragged_dispatch list).
_dispatch.add_dispatch_support_to(globals(), [
    "check_numerics",
])
