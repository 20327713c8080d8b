"""Fractional pooling (Graham 2014): `tf.nn.fractional_max_pool` / `fractional_avg_pool`.

Each op draws a row and a column pooling sequence per run, then pools NHWC input over
the cells they define: output row i covers input rows [seq[i], seq[i + 1] - 1], or up
to seq[i + 1] with `overlapping`, clipped to the input. The sequences follow TF's
GeneratePoolingSequence (fractional_pool_common.cc) for an input length n and output
length m = floor(n / ratio) (computed in float32, as TF does), k = n // m:

- pseudo_random: a_i = ceil(alpha * (i + u)) for i = 1..m-1 with alpha = n / m and one
  u uniform in [0, min((k + 2) / alpha - 1, (n + 1 - k) / alpha - (m - 1))), a_0 = 1,
  a_m = n + 1; the sequence is the cumulative sum of the gaps a_{i+1} - a_i from 0;
- random: n % m gaps of k + 1 and the rest of k, randomly permuted.

The records are `random=True`: a run's sequences come from the op's per-run PRNG key
(TF's Philox streams are not reproduced, only their rule); with `deterministic` the key
depends only on (seed, seed2), so every run pools over the same cells.

Lowering: the cells hold at most k + 1 (+1 overlapping) rows and columns, so the input
is gathered into [B, Ho, Wo, K, C] windows with a validity mask (static window size,
traced cell starts) and reduced. FractionalMaxPoolGrad sends each output's gradient to
the first maximum of its cell in row-major order (TF's kernel); FractionalAvgPoolGrad
spreads it evenly over the cell (accumulated in float64, as TF's kernel does). The grad
ops, like TF's, have no gradient. The pooling-sequence outputs have the static length
Ho + 1 (resp. Wo + 1), their actual length (TF's shape function says Ho).
"""

from __future__ import annotations

import collections

import jax
import jax.numpy as jnp
import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import errors
from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.ops.array import array_ops
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import static_input, with_rank
from tensorflux._src.ops.registry import OpDef, REQUIRED, register
from tensorflux._src.ops.shape_fns import static_shape_from_tensor

__all__ = ["fractional_max_pool", "fractional_avg_pool"]

_T = (_dtypes.float32, _dtypes.float64, _dtypes.int32, _dtypes.int64)
FractionalMaxPool = collections.namedtuple(
    "FractionalMaxPool", ["output", "row_pooling_sequence", "col_pooling_sequence"])
FractionalAvgPool = collections.namedtuple(
    "FractionalAvgPool", ["output", "row_pooling_sequence", "col_pooling_sequence"])


def _out_size(size, ratio):
    return int(np.floor(np.float32(size) / np.float32(ratio)))


# -- shapes ------------------------------------------------------------------------------------
def _pool_shape(op):
    x = with_rank(op.inputs[0].shape, 4)
    ratio = op.get_attr("pooling_ratio")
    if len(ratio) != 4:
        raise ValueError("pooling_ratio field must specify 4 dimensions")
    dims = []
    for i in range(4):
        d = x[i].value
        if d is None:
            dims.append(None)
            continue
        out = _out_size(d, ratio[i])
        if out < 0:
            raise ValueError(f"Size computed for dim {i} is negative: {out}")
        dims.append(out)
    seq = [TensorShape([None if d is None else d + 1]) for d in dims[1:3]]
    return [TensorShape(dims)] + seq


def _avg_grad_shape(op):
    with_rank(op.inputs[0].shape, 1)
    return with_rank(static_shape_from_tensor(op.inputs[0]), 4)


# -- pooling sequences -------------------------------------------------------------------------
def _sequence(key, n_in, n_out, pseudo_random):
    """TF's GeneratePoolingSequence, as an int64 vector of length n_out + 1."""
    k = n_in // n_out
    if pseudo_random:
        alpha = n_in / n_out
        max_u = min((k + 2) / alpha - 1, (n_in + 1 - k) / alpha - (n_out - 1))
        u = jax.random.uniform(key, (), jnp.float64) * max_u
        inner = jnp.ceil(alpha * (jnp.arange(1, n_out, dtype=jnp.float64) + u))
        bounds = jnp.concatenate([jnp.ones(1), inner, jnp.full(1, n_in + 1.0)])
        gaps = (bounds[1:] - bounds[:-1]).astype(jnp.int64)
    else:
        gaps = np.full(n_out, k, np.int64)
        gaps[:n_in % n_out] += 1
        gaps = jax.random.permutation(key, jnp.asarray(gaps))
    return jnp.concatenate([jnp.zeros(1, jnp.int64), jnp.cumsum(gaps)])


def _check_ratio(pooling_ratio, label):
    if len(pooling_ratio) != 4:
        raise errors.InvalidArgumentError(None, None,
                                          "pooling_ratio field must specify 4 dimensions")
    if pooling_ratio[0] != 1 or pooling_ratio[3] != 1:
        raise errors.UnimplementedError(
            None, None, f"Fractional {label} pooling is not yet supported on the batch nor "
            f"channel dimension.")


def _sequences(key, value, pooling_ratio, pseudo_random, deterministic, seed, seed2, label):
    _check_ratio(pooling_ratio, label)
    if value.ndim != 4:
        raise errors.InvalidArgumentError(None, None, "tensor_in must be 4-dimensional")
    outs = []
    for i in (1, 2):
        out = _out_size(value.shape[i], pooling_ratio[i])
        if out <= 0:
            raise errors.InvalidArgumentError(
                None, None, f"Pooling ratio is higher than input dimension size for "
                f"dimension {i}. Input dim size: {value.shape[i]} pooling ratio: "
                f"{pooling_ratio[i]}")
        outs.append(out)
    if deterministic:  # the same cells in every run
        key = jax.random.fold_in(jax.random.key(seed), seed2)
    row_key, col_key = jax.random.split(key)
    return (_sequence(row_key, value.shape[1], outs[0], pseudo_random),
            _sequence(col_key, value.shape[2], outs[1], pseudo_random))


# -- cells -------------------------------------------------------------------------------------
def _axis_cells(seq, size, overlapping):
    """(index [m, K], valid [m, K]) of the input positions in each cell along one axis."""
    m = seq.shape[0] - 1
    width = size // max(m, 1) + 1 + int(overlapping)
    start = seq[:-1]
    end = jnp.minimum(seq[1:] - (0 if overlapping else 1), size - 1)
    index = start[:, None] + jnp.arange(width)[None, :]
    return jnp.clip(index, 0, size - 1), index <= end[:, None]


def _cells(x_shape, rows, cols, overlapping):
    """Row/col index tables and the [Ho, Wo, KR * KC] validity of the cells."""
    r_idx, r_ok = _axis_cells(jnp.asarray(rows), x_shape[1], overlapping)
    c_idx, c_ok = _axis_cells(jnp.asarray(cols), x_shape[2], overlapping)
    valid = r_ok[:, None, :, None] & c_ok[None, :, None, :]
    return r_idx, c_idx, valid.reshape(valid.shape[:2] + (-1,))


def _gather(x, r_idx, c_idx):
    """[B, Ho, Wo, KR * KC, C]: the input values of each cell, row-major."""
    g = jnp.asarray(x)[:, r_idx][:, :, :, c_idx]        # [B, Ho, KR, Wo, KC, C]
    g = jnp.transpose(g, (0, 1, 3, 2, 4, 5))
    return g.reshape(g.shape[:3] + (-1, g.shape[-1]))


def _lowest(dtype):
    dtype = np.dtype(dtype)
    return np.finfo(dtype).min if dtype.kind == "f" else np.iinfo(dtype).min


def _max_cells(x, rows, cols, overlapping):
    r_idx, c_idx, valid = _cells(x.shape, rows, cols, overlapping)
    values = jnp.where(valid[None, :, :, :, None], _gather(x, r_idx, c_idx),
                       jnp.array(_lowest(x.dtype), x.dtype))
    return values, valid, r_idx, c_idx


def _max_pool_lower(key, value, pooling_ratio, pseudo_random, overlapping, deterministic,
                    seed, seed2):
    rows, cols = _sequences(key, value, pooling_ratio, pseudo_random, deterministic, seed,
                            seed2, "max")
    values, _, _, _ = _max_cells(value, rows, cols, overlapping)
    return jnp.max(values, axis=3), rows, cols


def _avg_cells(x, rows, cols, overlapping):
    r_idx, c_idx, valid = _cells(x.shape, rows, cols, overlapping)
    total = jnp.sum(jnp.where(valid[None, :, :, :, None], _gather(x, r_idx, c_idx), 0),
                    axis=3, dtype=x.dtype)
    count = jnp.sum(valid, axis=2)[None, :, :, None].astype(x.dtype)
    if jnp.issubdtype(x.dtype, jnp.integer):
        return jax.lax.div(total, count)  # TF's integer division truncates
    return total / count


def _avg_pool_lower(key, value, pooling_ratio, pseudo_random, overlapping, deterministic,
                    seed, seed2):
    rows, cols = _sequences(key, value, pooling_ratio, pseudo_random, deterministic, seed,
                            seed2, "average")
    return _avg_cells(value, rows, cols, overlapping), rows, cols


def _scatter(shape, r_idx, c_idx, k_cols, chosen_k, updates):
    """Adds updates [B, Ho, Wo, C] at the input position of cell tap `chosen_k`."""
    b, ho, wo, c = (jnp.arange(n).reshape([-1 if i == j else 1 for j in range(4)])
                    for i, n in enumerate(updates.shape))
    h = r_idx[ho, chosen_k // k_cols]
    w = c_idx[wo, chosen_k % k_cols]
    return jnp.zeros(shape, updates.dtype).at[b, h, w, c].add(updates)


def _max_pool_grad_lower(orig_input, orig_output, out_backprop, row_pooling_sequence,
                         col_pooling_sequence, overlapping):
    values, valid, r_idx, c_idx = _max_cells(orig_input, row_pooling_sequence,
                                             col_pooling_sequence, overlapping)
    best = jnp.max(values, axis=3, keepdims=True)
    first = jnp.argmax(valid[None, :, :, :, None] & (values == best), axis=3)
    return _scatter(orig_input.shape, r_idx, c_idx, c_idx.shape[1], first, out_backprop)


def _avg_pool_grad_lower(orig_input_tensor_shape, out_backprop, row_pooling_sequence,
                         col_pooling_sequence, overlapping):
    shape = tuple(int(d) for d in static_input(orig_input_tensor_shape,
                                               "FractionalAvgPoolGrad",
                                               "orig_input_tensor_shape"))
    if len(shape) != 4:
        raise errors.InvalidArgumentError(None, None, "original input tensor shape must be"
                                          "1-dimensional and 4 elements")
    r_idx, c_idx, valid = _cells(shape, row_pooling_sequence, col_pooling_sequence,
                                 overlapping)
    count = jnp.sum(valid, axis=2)[None, :, :, None]
    share = out_backprop.astype(jnp.float64) / count
    out = jnp.zeros(shape, jnp.float64)
    b, ho, wo, c = (jnp.arange(n).reshape([-1 if i == j else 1 for j in range(4)])
                    for i, n in enumerate(out_backprop.shape))
    for k in range(valid.shape[2]):  # one scatter per cell tap (a few: (k + 2) ** 2)
        update = jnp.where(valid[None, :, :, k, None], share, 0.0)
        h = r_idx[ho, k // c_idx.shape[1]]
        w = c_idx[wo, k % c_idx.shape[1]]
        out = out.at[b, h, w, c].add(update)
    return out.astype(out_backprop.dtype)


# -- gradients and records ---------------------------------------------------------------------
def _max_grad(op, grad, _rows, _cols):
    return [apply_op("FractionalMaxPoolGrad", orig_input=op.inputs[0],
                     orig_output=op.outputs[0], out_backprop=grad,
                     row_pooling_sequence=op.outputs[1], col_pooling_sequence=op.outputs[2],
                     overlapping=op.get_attr("overlapping"))]


def _avg_grad(op, grad, _rows, _cols):
    x = op.inputs[0]
    shape = (np.array(x.shape.as_list(), np.int64) if x.shape.is_fully_defined()
             else array_ops.shape(x, out_type=_dtypes.int64))
    return [apply_op("FractionalAvgPoolGrad", orig_input_tensor_shape=shape,
                     out_backprop=grad, row_pooling_sequence=op.outputs[1],
                     col_pooling_sequence=op.outputs[2],
                     overlapping=op.get_attr("overlapping"))]


_POOL_ATTRS = {"T": _T, "pooling_ratio": REQUIRED, "pseudo_random": False,
               "overlapping": False, "deterministic": False, "seed": 0, "seed2": 0}
_POOL_OUTPUTS = ("output: T", "row_pooling_sequence: int64", "col_pooling_sequence: int64")

register(OpDef("FractionalMaxPool", inputs=("value: T",), outputs=_POOL_OUTPUTS,
               attrs=_POOL_ATTRS, shape=_pool_shape, lower=_max_pool_lower, random=True,
               grad=_max_grad))
register(OpDef("FractionalAvgPool", inputs=("value: T",), outputs=_POOL_OUTPUTS,
               attrs=_POOL_ATTRS, shape=_pool_shape, lower=_avg_pool_lower, random=True,
               grad=_avg_grad))
register(OpDef(
    "FractionalMaxPoolGrad",
    inputs=("orig_input: T", "orig_output: T", "out_backprop: T",
            "row_pooling_sequence: int64", "col_pooling_sequence: int64"),
    outputs=("output: T",), attrs={"T": _T, "overlapping": False},
    shape=lambda op: with_rank(op.inputs[0].shape, 4), lower=_max_pool_grad_lower))
register(OpDef(
    "FractionalAvgPoolGrad",
    inputs=("orig_input_tensor_shape: int64", "out_backprop: T",
            "row_pooling_sequence: int64", "col_pooling_sequence: int64"),
    outputs=("output: T",), attrs={"T": _T, "overlapping": False},
    shape=_avg_grad_shape, lower=_avg_pool_grad_lower))


def _ratio_list(pooling_ratio):
    return [float(r) for r in pooling_ratio]


def fractional_max_pool(value, pooling_ratio, pseudo_random=False, overlapping=False,
                        deterministic=False, seed=0, seed2=0, name=None):
    """Max pooling of NHWC `value` over randomly drawn cells that shrink each spatial
    dim by `pooling_ratio` ([1, r_h, r_w, 1], r >= 1); returns (output,
    row_pooling_sequence, col_pooling_sequence)."""
    outs = apply_op("FractionalMaxPool", name=name, value=value,
                    pooling_ratio=_ratio_list(pooling_ratio), pseudo_random=pseudo_random,
                    overlapping=overlapping, deterministic=deterministic, seed=seed,
                    seed2=seed2)
    return FractionalMaxPool(*outs)


def fractional_avg_pool(value, pooling_ratio, pseudo_random=False, overlapping=False,
                        deterministic=False, seed=0, seed2=0, name=None):
    """Average pooling over fractional-pooling cells (see fractional_max_pool)."""
    outs = apply_op("FractionalAvgPool", name=name, value=value,
                    pooling_ratio=_ratio_list(pooling_ratio), pseudo_random=pseudo_random,
                    overlapping=overlapping, deterministic=deterministic, seed=seed,
                    seed2=seed2)
    return FractionalAvgPool(*outs)
