"""Helpers the string-family records share: bytes <-> object arrays, TF's checks of
string attrs with a fixed set of values, and the UTF-8 walk TF's kernels use.

String tensors are numpy object arrays of `bytes`; kernels receive them as such (a str
element, from a Python value, is UTF-8 encoded by `as_bytes`).
"""

from __future__ import annotations

import numpy as np


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


# -- RaggedTensor results ------------------------------------------------------------------
# TF returns a tf.RaggedTensor from the splitting and decoding ops for inputs of rank >= 1.
# tensorflux has no RaggedTensor yet, so these two constructors, the only places that
# would build one, say so; they are where RaggedTensor.from_row_splits /
# from_value_rowids get connected (with input.with_flat_values for rank > 1).
def _no_ragged(what, ndims):
    return NotImplementedError(
        f"{what} of a rank-{ndims} input returns a tf.RaggedTensor in TF, which tensorflux "
        f"does not have yet; only a scalar input gives a dense result.")


def ragged_from_row_splits(values, row_splits, what, ndims):
    raise _no_ragged(what, ndims)


def ragged_from_value_rowids(values, value_rowids, nrows, what, ndims):
    raise _no_ragged(what, ndims)
