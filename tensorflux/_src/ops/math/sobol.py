"""`sobol_sample`: TF's SobolSample op, points of the Sobol low-discrepancy sequence.

The direction numbers are Joe and Kuo's (new-joe-kuo-6.21201, 21201 dimensions; S. Joe and
F. Y. Kuo, SIAM J. Sci. Comput. 30, 2635-2654, 2008), the set TF's kernel uses; SciPy's
`qmc.Sobol` ships the same. `sobol_directions.xz` holds each dimension's primitive
polynomial and initial direction numbers (see `_tables` for the layout); the rest follow
from the recurrence. As in TF the sequence starts after its all-zero point: sample i is
Sobol point skip + i + 1 (Gray-code order), in [num_results, dim].

The outputs depend only on the three integer inputs, so the lowering needs them when the
graph is compiled (fed values are compiled in, one executable per value) and computes
the points in NumPy; nothing is traced.
"""

from __future__ import annotations

import functools
import importlib.resources
import lzma

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.ops.array_ops import kernel_error, static_input, static_scalar, with_rank
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.registry import OpDef, register

__all__ = ["sobol_sample"]

MAX_DIM = 21201
_INITIAL = 18  # initial direction numbers stored per dimension (the highest degree)
_INT32_MAX = 2 ** 31 - 1


@functools.lru_cache(maxsize=None)
def _tables():
    """(polynomials, initial direction numbers m_1..m_18) of every dimension.

    The file is lzma-compressed little-endian uint32: the polynomials without their
    constant term (p >> 1), then for k = 0..17 the column (m_k - 1) / 2 over dimensions
    (direction numbers are odd; entries past a polynomial's degree are 0)."""
    raw = lzma.decompress(importlib.resources.files(__package__)
                          .joinpath("sobol_directions.xz").read_bytes())
    words = np.frombuffer(raw, "<u4").astype(np.int64)
    poly = words[:MAX_DIM] * 2 + 1
    initial = words[MAX_DIM:].reshape(_INITIAL, MAX_DIM).T * 2 + 1
    return poly, initial


def direction_numbers(dim, bits):
    """m[j, k] for dimensions j < dim and bits k < bits (m < 2^(k+1)), by the recurrence
    m_k = m_(k-s) ^ (m_(k-s) << s) ^ XOR_i (a_i m_(k-i) << i) of each polynomial."""
    poly, initial = _tables()
    poly, initial = poly[:dim], initial[:dim]
    degree = np.array([int(p).bit_length() - 1 for p in poly])
    m = np.ones((dim, bits), np.int64)  # dimension 0 (van der Corput) is all ones
    rows = np.arange(1, dim)
    deg = degree[1:]
    for k in range(bits):
        from_initial = k < deg
        back = np.maximum(k - deg, 0)
        base = m[rows, back]
        new = base ^ (base << deg)
        for i in range(1, int(deg.max(initial=1))):
            use = (i < deg) & ((poly[1:] >> np.maximum(deg - i, 0)) & 1 == 1) & (k >= i)
            new ^= np.where(use, m[rows, max(k - i, 0)] << i, 0)
        start = initial[1:, min(k, _INITIAL - 1)]
        m[rows, k] = np.where(from_initial, start, new)
    return m


def sobol_points(dim, num_results, skip, dtype):
    """Sobol points skip + 1 ... skip + num_results of `dim` dimensions."""
    bits = max(1, int(skip + num_results).bit_length())
    v = direction_numbers(dim, bits) << (bits - 1 - np.arange(bits))  # [dim, bits]
    first = skip + 1
    gray = first ^ (first >> 1)
    start = np.bitwise_xor.reduce(np.where((gray >> np.arange(bits)) & 1 == 1, v, 0), axis=1)
    # Point q + 1 is point q with the direction number of q's lowest zero bit flipped in.
    q = np.arange(first, first + num_results - 1, dtype=np.int64)
    lowest_zero = np.log2((~q) & (q + 1)).round().astype(np.int64)
    steps = v[:, lowest_zero].T  # [num_results - 1, dim]
    points = np.bitwise_xor.accumulate(np.concatenate([start[None], steps]), axis=0)
    return (points / float(2 ** bits)).astype(dtype)


def _sobol_shape(op):
    for t in op.inputs:
        with_rank(t.shape, 0)
    dim, num_results = static_scalar(op.inputs[0]), static_scalar(op.inputs[1])
    return TensorShape([num_results, dim])


def _sobol_lower(dim, num_results, skip, dtype):
    dim, num_results, skip = (int(static_input(v, "SobolSample", n)) for v, n in
                              ((dim, "dim"), (num_results, "num_results"), (skip, "skip")))
    if dim < 1:
        raise kernel_error("dim must be at least one")
    if dim > MAX_DIM:
        raise kernel_error(f"dim must be at most {MAX_DIM}")
    if num_results < 1:
        raise kernel_error("num_results must be at least one")
    if skip < 0:
        raise kernel_error("skip must be non-negative")
    if num_results >= _INT32_MAX - skip:
        raise kernel_error(f"num_results+skip must be less than {_INT32_MAX}")
    if num_results * dim >= _INT32_MAX:
        raise kernel_error(f"num_results*dim must be less than {_INT32_MAX}")
    return sobol_points(dim, num_results, skip, dtype.as_numpy_dtype)


register(OpDef("SobolSample", inputs=("dim: int32", "num_results: int32", "skip: int32"),
               outputs=("samples: dtype",),
               attrs={"dtype": (_dtypes.float32, _dtypes.float64)},
               type_defaults={"dtype": _dtypes.float32}, shape=_sobol_shape,
               lower=_sobol_lower, not_differentiable=True))


def sobol_sample(dim, num_results, skip=0, dtype=_dtypes.float32, name=None):
    """[num_results, dim] points of the Sobol sequence in [0, 1), after skipping `skip`."""
    with _graph.name_scope(name, "sobol", [dim, num_results, skip]):
        return apply_op("SobolSample", dim=dim, num_results=num_results, skip=skip,
                        dtype=dtype)
