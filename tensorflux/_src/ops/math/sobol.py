"""`sobol_sample`: TF's SobolSample op, points of the Sobol low-discrepancy sequence.

TF's kernel uses Joe and Kuo's direction numbers (new-joe-kuo-6.21201, 21201
dimensions), the set SciPy's unscrambled `qmc.Sobol` generates from, so SciPy (already
installed with JAX) makes the points. As in TF the sequence starts after its all-zero
point: sample i is Sobol point skip + i + 1, in [num_results, dim].

The outputs depend only on the three integer inputs, so the lowering needs them when the
graph is compiled (fed values are compiled in, one executable per value) and computes
the points on the host; nothing is traced.
"""

from __future__ import annotations

import warnings

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import kernel_error, static_input, static_scalar, with_rank
from tensorflux._src.ops.registry import OpDef, register

__all__ = ["sobol_sample"]

MAX_DIM = 21201
_INT32_MAX = 2 ** 31 - 1


def sobol_points(dim, num_results, skip, dtype):
    """Sobol points skip + 1 ... skip + num_results of `dim` dimensions."""
    # scipy.stats takes half a second and 60 MB to import: only programs that sample do.
    from scipy.stats import qmc
    # 32 bits cover every index TF allows (skip + num_results < 2^31), and an unscrambled
    # point is the same fraction whatever the number of bits beyond those it needs.
    engine = qmc.Sobol(dim, scramble=False, bits=32)
    engine.fast_forward(skip + 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # num_results not a power of 2
        return engine.random(num_results).astype(dtype)


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
