"""Batched diagonals and bands: MatrixDiag, MatrixDiagPart, MatrixSetDiag (TF's V1 ops and
the V2 ops with diagonal offsets `k`), MatrixBandPart.

TF 1.15's wrappers (`tf.linalg.diag(diagonal, name="diag", k=0, num_rows=-1, num_cols=-1,
padding_value=0)`, ...) build the V1 op when every band argument has its default and
the V2 op otherwise. V2 stores a band of diagonals as rows `k[1], k[1]-1, ..., k[0]`,
each left-aligned and padded on the right (what V3 later called "LEFT_LEFT").
`k`, `num_rows` and `num_cols` decide output shapes, so XLA needs them when it compiles.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from tensorflux._src.compiler import effects
from tensorflux._src.framework import dtypes as _d
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework.tensor_shape import Dimension, TensorShape, unknown_shape
from tensorflux._src.ops.array.generator_ops import zeros_like
from tensorflux._src.ops.linalg._common import merge_dim
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import (ANY, dims_str, kernel_error, merge_shapes,
                                            static_input, with_rank, with_rank_at_least)
from tensorflux._src.ops.registry import OpDef, register
from tensorflux._src.ops.shape_fns import static_value, unchanged

__all__ = ["matrix_band_part", "matrix_diag", "matrix_diag_part", "matrix_set_diag"]

_I = _d.INDEX


# -- the gather arithmetic shared by the lowerings ----------------------------------------
def _diag_len(rows, cols, lo, hi):
    """TF's max_diag_len: the longest diagonal in the band [lo, hi] of a rows x cols matrix."""
    return min(rows + min(hi, 0), cols - max(lo, 0))


def _band_positions(rows, cols, lo, hi, length):
    """For each (i, j) of a rows x cols matrix: whether it is on a stored diagonal, and
    the (row, column) of its value in the [num_diags, length] storage."""
    i = np.arange(rows)[:, None]
    j = np.arange(cols)[None, :]
    d = j - i
    index = np.minimum(i, j)  # left-aligned: a diagonal starts at its first element
    on = (d >= lo) & (d <= hi) & (index < length)
    return on, np.clip(hi - d, 0, hi - lo), np.clip(index, 0, max(length - 1, 0))


def _diag_matrix(diags, lo, hi, rows, cols, pad):
    """diags [..., num_diags, length] (or [..., length] when lo == hi) -> [..., rows, cols]."""
    if lo == hi:
        diags = diags[..., None, :]
    on, drow, dcol = _band_positions(rows, cols, lo, hi, diags.shape[-1])
    values = diags[..., drow, dcol]
    return jnp.where(on, values, jnp.asarray(pad, diags.dtype))


def _diag_part(x, lo, hi, pad):
    rows, cols = x.shape[-2:]
    length = max(_diag_len(rows, cols, lo, hi), 0)
    t = np.arange(hi - lo + 1)[:, None]
    p = np.arange(length)[None, :]
    d = hi - t
    i = np.where(d >= 0, p, p - d)
    j = np.where(d >= 0, p + d, p)
    ok = (i < rows) & (j < cols)
    values = x[..., np.clip(i, 0, rows - 1), np.clip(j, 0, cols - 1)]
    out = jnp.where(ok, values, jnp.asarray(pad, x.dtype))
    return out[..., 0, :] if lo == hi else out


def _set_diag(x, diags, lo, hi):
    rows, cols = x.shape[-2:]
    if lo == hi:
        diags = diags[..., None, :]
    on, drow, dcol = _band_positions(rows, cols, lo, hi, diags.shape[-1])
    return jnp.where(on, diags[..., drow, dcol], x)


def _read_k(k, op_type):
    k = np.reshape(static_input(k, op_type, "k"), [-1])
    if k.size not in (1, 2):
        raise kernel_error(f"diag_index must have only one or two elements, received "
                           f"{k.size} elements.")
    lo, hi = int(k[0]), int(k[-1])
    if lo > hi:
        raise kernel_error(f"lower_diag_index must not be larger than upper_diag_index: "
                           f"{lo} > {hi}")
    return lo, hi


def _static_k(tensor):
    """(lo, hi) from a static `k`, else None; TF's ReadDiagIndex with its errors."""
    value = static_value(tensor)
    if value is None:
        return None
    value = np.reshape(value, [-1])
    if value.size not in (1, 2):
        raise ValueError(f"diag_index must be a vector with one or two elements. It has "
                         f"{value.size} elements.")
    lo, hi = int(value[0]), int(value[-1])
    if lo > hi:
        raise ValueError("lower_diag_index is greater than upper_diag_index")
    return lo, hi


def _static_int(tensor):
    value = static_value(tensor)
    return None if value is None else int(np.reshape(value, [-1])[0])


# -- V1: the main diagonal -----------------------------------------------------------------
def _matrix_diag_shape(op):
    s = with_rank_at_least(op.inputs[0].shape, 1)
    if s.ndims is None:
        return unknown_shape()
    return s.concatenate([s.dims[-1]])


def _matrix_diag_part_shape(op):
    s = with_rank_at_least(op.inputs[0].shape, 2)
    if s.ndims is None:
        return unknown_shape()
    m, n = s.dims[-2].value, s.dims[-1].value
    return s[:-2].concatenate([None if m is None or n is None else min(m, n)])


def _matrix_set_diag_shape(op):
    x = with_rank_at_least(op.inputs[0].shape, 2)
    diag = with_rank_at_least(op.inputs[1].shape, 1)
    if x.ndims is not None:
        diag = with_rank(diag, x.ndims - 1)
        m, n = x.dims[-2].value, x.dims[-1].value
        smallest = None if m is None or n is None else min(m, n)
        if diag.ndims is not None:
            merge_dim(smallest, diag.dims[-1])
    if diag.ndims is not None and not x.is_fully_defined():
        x = merge_shapes(x, diag[:-1].concatenate([None, None]))
    return x


def _matrix_set_diag_lower(input, diagonal):  # noqa: A002 - TF's argument name
    if diagonal.shape[:-1] != input.shape[:-2] or \
            diagonal.shape[-1] != min(input.shape[-2:]):
        raise kernel_error(f"must have diagonal.shape == input.shape[:-2] + "
                           f"min(input.shape[-2:]), but received input shape: "
                           f"{dims_str(input.shape)} and diagonal shape: "
                           f"{dims_str(diagonal.shape)}")
    return _set_diag(input, diagonal, 0, 0)


def _matrix_diag_part_grad(op, grad):
    matrix = op.inputs[0].shape[-2:] if op.inputs[0].shape.ndims is not None else None
    if matrix is not None and matrix.is_fully_defined() and matrix[0] == matrix[1]:
        return [matrix_diag(grad)]
    return [matrix_set_diag(zeros_like(op.inputs[0]), grad)]


def _matrix_set_diag_grad(op, grad):
    zeros = zeros_like(matrix_diag_part(grad))
    return [matrix_set_diag(grad, zeros), matrix_diag_part(grad)]


register(OpDef(
    "MatrixDiag", inputs=("diagonal: T",), outputs=("output: T",), attrs={"T": ANY},
    shape=_matrix_diag_shape,
    lower=lambda diagonal: _diag_matrix(diagonal, 0, 0, diagonal.shape[-1],
                                        diagonal.shape[-1], 0),
    grad=lambda op, grad: [matrix_diag_part(grad)],
))
register(OpDef(
    "MatrixDiagPart", inputs=("input: T",), outputs=("diagonal: T",), attrs={"T": ANY},
    shape=_matrix_diag_part_shape, lower=lambda input: _diag_part(input, 0, 0, 0),
    grad=_matrix_diag_part_grad,
))
register(OpDef(
    "MatrixSetDiag", inputs=("input: T", "diagonal: T"), outputs=("output: T",),
    attrs={"T": ANY}, shape=_matrix_set_diag_shape, lower=_matrix_set_diag_lower,
    grad=_matrix_set_diag_grad,
))


# -- V2: bands of diagonals ----------------------------------------------------------------
def _matrix_diag_v2_shape(op):
    diag_t, k_t, rows_t, cols_t, pad_t = op.inputs
    s = with_rank_at_least(diag_t.shape, 1)
    if k_t.shape.ndims is not None and k_t.shape.ndims > 1:
        raise ValueError(f"Shape must be at most rank 1 but is rank {k_t.shape.ndims}")
    for t in (rows_t, cols_t, pad_t):
        with_rank(t.shape, 0)
    k = _static_k(k_t)
    if s.ndims is None or k is None:
        return unknown_shape()
    lo, hi = k
    rank = s.ndims
    if lo < hi:
        num_diags = s.dims[rank - 2].value if rank >= 2 else None
        if num_diags is not None and num_diags != hi - lo + 1:
            raise ValueError(f"The number of rows of `diagonal` doesn't match the number of "
                             f"diagonals implied from `d_lower` and `d_upper`.\nnum_diags = "
                             f"{num_diags}, d_lower = {lo}, d_upper = {hi} {rank} "
                             f"{s.dims[-1].value}")
    length = s.dims[-1].value
    rows, cols = _static_int(rows_t), _static_int(cols_t)
    if length is None or rows is None or cols is None:
        out_rows = out_cols = Dimension(None)
    else:
        out_rows, out_cols = _v2_output_dims(length, lo, hi, rows, cols, ValueError)
    if lo == hi:
        return s[:-1].concatenate([out_rows, out_cols])
    return s[:-2].concatenate([out_rows, out_cols])


def _v2_output_dims(length, lo, hi, rows, cols, error):
    min_rows = length - min(hi, 0)
    min_cols = length + max(lo, 0)
    if rows == -1 and cols == -1:
        rows = cols = max(min_rows, min_cols)
    if rows == -1:
        rows = min_rows
    elif rows < min_rows:
        raise error("num_rows is too small.")
    if cols == -1:
        cols = min_cols
    elif cols < min_cols:
        raise error("num_cols is too small.")
    if rows != min_rows and cols != min_cols:
        raise error(f"num_rows and num_cols are not consistent with lower_diag_index, "
                    f"upper_diag_index, and the length of the given diagonals.\nnum_rows = "
                    f"{rows} != min_num_rows = {min_rows}, num_cols = {cols} != min_num_cols "
                    f"= {min_cols}")
    return rows, cols


def _kernel_error_cls(message):
    return kernel_error(message)


def _matrix_diag_v2_lower(diagonal, k, num_rows, num_cols, padding_value):
    lo, hi = _read_k(k, "MatrixDiagV2")
    rows = int(static_input(num_rows, "MatrixDiagV2", "num_rows"))
    cols = int(static_input(num_cols, "MatrixDiagV2", "num_cols"))
    if lo < hi and (diagonal.ndim < 2 or diagonal.shape[-2] != hi - lo + 1):
        raise kernel_error(f"The number of diagonals provided in the input does not match "
                           f"the lower_diag_index and upper_diag_index range.")
    rows, cols = _v2_output_dims(diagonal.shape[-1], lo, hi, rows, cols, _kernel_error_cls)
    return _diag_matrix(diagonal, lo, hi, rows, cols, padding_value)


def _check_bounds(lo, hi, rows, cols, error):
    if lo != 0 and (-rows >= lo or lo >= cols):
        raise error("lower_diag_index is out of bound.")
    if hi != 0 and (-rows >= hi or hi >= cols):
        raise error("upper_diag_index is out of bound.")


def _matrix_diag_part_v2_shape(op):
    x_t, k_t, pad_t = op.inputs
    s = with_rank_at_least(x_t.shape, 2)
    with_rank(pad_t.shape, 0)
    k = _static_k(k_t)
    if s.ndims is None or k is None:
        return unknown_shape()
    lo, hi = k
    rows, cols = s.dims[-2].value, s.dims[-1].value
    length = None
    if rows is not None and cols is not None:
        _check_bounds(lo, hi, rows, cols, ValueError)
        length = _diag_len(rows, cols, lo, hi)
    dims = s[:-2].as_list() + ([hi - lo + 1] if lo < hi else []) + [length]
    return TensorShape(dims)


def _matrix_diag_part_v2_lower(input, k, padding_value):  # noqa: A002
    lo, hi = _read_k(k, "MatrixDiagPartV2")
    _check_bounds(lo, hi, input.shape[-2], input.shape[-1], _kernel_error_cls)
    return _diag_part(input, lo, hi, padding_value)


def _matrix_set_diag_v2_shape(op):
    x_t, diag_t, k_t = op.inputs
    x = with_rank_at_least(x_t.shape, 2)
    diag = with_rank_at_least(diag_t.shape, 1)
    k = _static_k(k_t)
    if x.ndims is not None:
        if k is not None:
            diag = with_rank(diag, x.ndims - 1 if k[0] == k[1] else x.ndims)
        elif diag.ndims is not None and not x.ndims - 1 <= diag.ndims <= x.ndims:
            raise ValueError(f"Shape must be at least rank {x.ndims - 1} but is rank "
                             f"{diag.ndims}")
        rows, cols = x.dims[-2].value, x.dims[-1].value
        if k is not None and rows is not None and cols is not None:
            lo, hi = k
            _check_bounds(lo, hi, rows, cols, ValueError)
            if diag.ndims is not None:
                merge_dim(_diag_len(rows, cols, lo, hi), diag.dims[-1])
                if lo != hi:
                    merge_dim(hi - lo + 1, diag.dims[-2])
    if diag.ndims is not None and x.ndims is not None and k is not None and \
            not x.is_fully_defined():
        batch = diag[:-1] if k[0] == k[1] else diag[:-2]
        x = merge_shapes(x, batch.concatenate([None, None]))
    return x


def _matrix_set_diag_v2_lower(input, diagonal, k):  # noqa: A002
    lo, hi = _read_k(k, "MatrixSetDiagV2")
    rows, cols = input.shape[-2:]
    _check_bounds(lo, hi, rows, cols, _kernel_error_cls)
    length = _diag_len(rows, cols, lo, hi)
    want = input.shape[:-2] + ((length,) if lo == hi else (hi - lo + 1, length))
    if diagonal.shape != want:
        raise kernel_error(f"diagonal must have shape {dims_str(want)}, but received "
                           f"{dims_str(diagonal.shape)}")
    return _set_diag(input, diagonal, lo, hi)


def _matrix_diag_part_v2_grad(op, grad):
    x, k = op.inputs[0], op.inputs[1]
    matrix = x.shape[-2:] if x.shape.ndims is not None else None
    if matrix is not None and matrix.is_fully_defined():
        return [matrix_diag(grad, k=k, num_rows=matrix[0].value, num_cols=matrix[1].value),
                None, None]
    return [matrix_set_diag(zeros_like(x), grad, k=k), None, None]


def _matrix_set_diag_v2_grad(op, grad):
    k = op.inputs[2]
    part = matrix_diag_part(grad, k=k)
    zeros = zeros_like(part)
    return [matrix_set_diag(grad, zeros, k=k), part, None]


register(OpDef(
    "MatrixDiagV2",
    inputs=("diagonal: T", "k: int32", "num_rows: int32", "num_cols: int32",
            "padding_value: T"),
    outputs=("output: T",), attrs={"T": ANY},
    shape=_matrix_diag_v2_shape, lower=_matrix_diag_v2_lower,
    grad=lambda op, grad: [matrix_diag_part(grad, k=op.inputs[1]), None, None, None, None],
))
register(OpDef(
    "MatrixDiagPartV2", inputs=("input: T", "k: int32", "padding_value: T"),
    outputs=("diagonal: T",), attrs={"T": ANY},
    shape=_matrix_diag_part_v2_shape, lower=_matrix_diag_part_v2_lower,
    grad=_matrix_diag_part_v2_grad,
))
register(OpDef(
    "MatrixSetDiagV2", inputs=("input: T", "diagonal: T", "k: int32"),
    outputs=("output: T",), attrs={"T": ANY},
    shape=_matrix_set_diag_v2_shape, lower=_matrix_set_diag_v2_lower,
    grad=_matrix_set_diag_v2_grad,
))


# -- MatrixBandPart ------------------------------------------------------------------------
def _matrix_band_part_lower(input, num_lower, num_upper):  # noqa: A002
    if input.ndim < 2:
        raise kernel_error(f"input must be at least 2-dim, received shape: "
                           f"{dims_str(input.shape)}")
    for name, v in (("num_lower", num_lower), ("num_upper", num_upper)):
        if np.ndim(v) != 0:
            raise kernel_error(f"{name} must be scalar, got shape {dims_str(np.shape(v))}")
    rows, cols = input.shape[-2:]
    # TF's CPU kernel refuses bands wider than the matrix (negative means "all").
    effects.check(num_lower <= rows, lambda v: f"num_lower must be negative or less or equal "
                  f"to number of rows ({rows}) got: {int(v)}", data=(num_lower,))
    effects.check(num_upper <= cols, lambda v: f"num_upper must be negative or less or "
                  f"equal to number of columns ({cols}) got: {int(v)}", data=(num_upper,))
    i = np.arange(rows)[:, None]
    j = np.arange(cols)[None, :]
    keep = ((num_lower < 0) | (i - j <= num_lower)) & ((num_upper < 0) | (j - i <= num_upper))
    return jnp.where(keep, input, jnp.zeros((), input.dtype))


register(OpDef(
    "MatrixBandPart", inputs=("input: T", "num_lower: Tindex", "num_upper: Tindex"),
    outputs=("band: T",), attrs={"T": ANY, "Tindex": _I}, type_defaults={"Tindex": _d.int64},
    shape=unchanged, lower=_matrix_band_part_lower,
    grad=lambda op, grad: [matrix_band_part(grad, op.inputs[1], op.inputs[2]), None, None],
))


# -- public wrappers ---------------------------------------------------------------------------
def _is_default(value, default):
    return not isinstance(value, Tensor) and np.ndim(value) == 0 and value == default \
        and not isinstance(value, bool)


def _padding_for(tensor, padding_value):
    dtype = getattr(tensor, "dtype", None)
    if dtype is not None and dtype.base_dtype == _d.bool and not isinstance(padding_value,
                                                                             Tensor):
        return bool(padding_value)  # TF's special case: 0 does not convert to bool
    return padding_value


def matrix_diag(diagonal, name="diag", k=0, num_rows=-1, num_cols=-1, padding_value=0):
    """A batch of matrices with `diagonal` on diagonal(s) `k` (an int, or a (low, high)
    band whose diagonals are the rows of `diagonal[..., :, :]`, highest first), everything
    else `padding_value`. Without num_rows/num_cols the matrices are square."""
    if all(_is_default(v, d) for v, d in ((k, 0), (num_rows, -1), (num_cols, -1),
                                           (padding_value, 0))):
        return apply_op("MatrixDiag", name=name, diagonal=diagonal)
    return apply_op("MatrixDiagV2", name=name, diagonal=diagonal, k=k, num_rows=num_rows,
                    num_cols=num_cols, padding_value=_padding_for(diagonal, padding_value))


def matrix_diag_part(input, name="diag_part", k=0, padding_value=0):  # noqa: A002
    """The diagonal(s) `k` of a batch of matrices; a band (low, high) gives rows
    high..low, each padded on the right with `padding_value`."""
    if _is_default(k, 0) and _is_default(padding_value, 0):
        return apply_op("MatrixDiagPart", name=name, input=input)
    return apply_op("MatrixDiagPartV2", name=name, input=input, k=k,
                    padding_value=_padding_for(input, padding_value))


def matrix_set_diag(input, diagonal, name="set_diag", k=0):  # noqa: A002
    """`input` with diagonal(s) `k` replaced by `diagonal` (laid out as matrix_diag_part
    returns it)."""
    if _is_default(k, 0):
        return apply_op("MatrixSetDiag", name=name, input=input, diagonal=diagonal)
    return apply_op("MatrixSetDiagV2", name=name, input=input, diagonal=diagonal, k=k)


def matrix_band_part(input, num_lower, num_upper, name=None):  # noqa: A002
    """Zeroes everything outside a band: `num_lower` subdiagonals and `num_upper`
    superdiagonals are kept (negative: all of them)."""
    return apply_op("MatrixBandPart", name=name, input=input, num_lower=num_lower,
                    num_upper=num_upper)
