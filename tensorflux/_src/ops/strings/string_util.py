"""Helpers the string-family records share: bytes <-> object arrays, TF's checks of
string attrs with a fixed set of values, the UTF-8 walk TF's kernels use, and the
RaggedTensor inputs and results of the splitting and decoding wrappers.

String tensors are numpy object arrays of `bytes`; kernels receive them as such (a str
element, from a Python value, is UTF-8 encoded by `as_bytes`).
"""

from __future__ import annotations

import functools

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.sparse.ragged_ops import map_flat_values
from tensorflux._src.ops.sparse.ragged_tensor import RaggedTensor, RaggedTensorValue


def as_bytes(value) -> bytes:
    return value.encode("utf-8") if isinstance(value, str) else bytes(value)


def as_text(value) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def strings_like(shape, items):
    """An object array of `shape` holding `items` (bytes) in row-major order."""
    out = np.empty(len(items), object)
    out[:] = items
    return out.reshape(shape)


def map_strings(fn, strings, dtype=object):
    """fn applied to every element (as bytes) of a string array, keeping its shape."""
    flat = [fn(as_bytes(s)) for s in np.asarray(strings, object).reshape(-1)]
    if dtype is object:
        return strings_like(np.shape(strings), flat)
    return np.array(flat, dtype).reshape(np.shape(strings))


def check_choice(op_type, attr, value, allowed):
    """TF's op_def_library check of a string attr with allowed values (a ValueError when
    the op is built)."""
    if as_text(value) not in allowed:
        listed = '", "'.join(allowed)
        raise ValueError(f"Attr '{attr}' of '{op_type}' Op passed string '{as_text(value)}' "
                         f"not in: \"{listed}\".")
    return as_text(value)


def is_trail_byte(byte: int) -> bool:
    """A UTF-8 continuation byte (10xxxxxx), TF's IsTrailByte."""
    return (byte & 0xC0) == 0x80


# -- RaggedTensor inputs and results -------------------------------------------------------
# TF's splitting and decoding ops return a tf.RaggedTensor for inputs of rank >= 1, and
# accept RaggedTensor inputs (the op runs on the flat values; the result keeps the input's
# row partitions).
def is_ragged(value) -> bool:
    return isinstance(value, (RaggedTensor, RaggedTensorValue))


def to_tensor_or_ragged(value, dtype=None, name=None):
    """TF's convert_to_tensor_or_ragged_tensor: a RaggedTensor (a RaggedTensorValue becomes
    one) or a Tensor."""
    if isinstance(value, RaggedTensorValue):
        value = RaggedTensor.from_nested_row_splits(value.flat_values,
                                                    value.nested_row_splits, validate=False)
    if isinstance(value, RaggedTensor):
        if dtype is not None and not _dtypes.as_dtype(dtype).is_compatible_with(value.dtype):
            raise ValueError(f"Tensor conversion requested dtype {_dtypes.as_dtype(dtype).name} "
                             f"for RaggedTensor with dtype {value.dtype.name}: {value!r}")
        return value
    return convert_to_tensor(value, dtype=dtype, name=name)


def ragged_rows(values, row_splits):
    """The RaggedTensor of an op's (values, row_splits) outputs (already valid)."""
    return RaggedTensor.from_row_splits(values, row_splits, validate=False)


def ragged_from_value_rowids(values, value_rowids, nrows):
    """The RaggedTensor of a split op's sparse result: row ids are its indices[:, 0]."""
    return RaggedTensor.from_value_rowids(values, value_rowids, nrows, validate=False)


def with_ragged_rank(value, ndims):
    """`value` (a Tensor or RaggedTensor of rank `ndims` > 1) as a RaggedTensor whose
    flat values are a vector, as TF's decoding ops prepare their inputs."""
    if not isinstance(value, RaggedTensor):
        return RaggedTensor.from_tensor(value, ragged_rank=ndims - 1)
    if value.ragged_rank < ndims - 1:
        return value.with_flat_values(RaggedTensor.from_tensor(
            value.flat_values, ragged_rank=ndims - value.ragged_rank - 1))
    return value


def _holds_ragged(value):
    if isinstance(value, (list, tuple)):
        return any(_holds_ragged(v) for v in value)
    return is_ragged(value)


def _as_ragged_tensors(value):
    if isinstance(value, (list, tuple)):
        return type(value)(_as_ragged_tensors(v) for v in value)
    return to_tensor_or_ragged(value) if isinstance(value, RaggedTensorValue) else value


def ragged_elementwise(fn):
    """TF's ragged dispatch for an elementwise string op: RaggedTensor arguments (which
    must share their row partitions) give way to their flat values, and the result
    keeps their partitions (tf.ragged.map_flat_values)."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if not (_holds_ragged(args) or _holds_ragged(list(kwargs.values()))):
            return fn(*args, **kwargs)
        args = _as_ragged_tensors(args)
        kwargs = {k: _as_ragged_tensors(v) for k, v in kwargs.items()}
        return map_flat_values(fn, *args, **kwargs)
    return wrapper
