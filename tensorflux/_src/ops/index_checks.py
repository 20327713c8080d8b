"""TF's CPU kernels' errors for out-of-range scatter indices, at build or run time.

Indices known when the graph is compiled fail as soon as the op is lowered; indices
computed at run time are checked inside the compiled cluster (`compiler/effects.py`),
so a run with a bad index raises TF's InvalidArgumentError and writes no variable.
The scatter itself drops such updates (they never reach memory), so the check is the
only thing that tells them apart from TF's GPU kernels, which skip them silently.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from tensorflux._src.compiler import effects


def _xp(value):
    return np if isinstance(value, np.ndarray) or np.isscalar(value) else jnp


def index_str(shape, flat):
    """TF's SliceDebugString: where a flat position sits in `shape`, as [i,j] ('' for 0-d)."""
    if len(shape) == 0:
        return ""
    return "[" + ",".join(str(int(i)) for i in np.unravel_index(flat, shape)) + "]"


def dims_str(shape):
    return "[" + ",".join(str(int(d)) for d in shape) + "]"


def check_rows(indices, limits, shape):
    """indices[..., k] rows must lie in [0, limits): TF's "does not index into shape"."""
    limits = np.asarray(limits, np.int64)
    xp = _xp(indices)
    if indices.size == 0:
        return
    ok = xp.all((indices >= 0) & (indices < limits))

    def message(values):
        k = values.shape[-1]
        rows = values.reshape(-1, k)
        bad = int(np.flatnonzero(((rows < 0) | (rows >= limits)).any(axis=1))[0])
        shown = ", ".join(str(int(v)) for v in rows[bad])
        return (f"indices{index_str(values.shape[:-1], bad)} = [{shown}] does not index "
                f"into shape {dims_str(shape)}")

    effects.check(ok, message, data=(indices,))


def check_first_dim(indices, n):
    """Scalar indices into dimension 0 of size n: TF's "is not in [0, n)"."""
    xp = _xp(indices)
    if np.size(indices) == 0:
        return
    ok = xp.all((indices >= 0) & (indices < n))

    def message(values):
        flat = values.reshape(-1)
        bad = int(np.flatnonzero((flat < 0) | (flat >= n))[0])
        return (f"indices{index_str(values.shape, bad)} = {int(flat[bad])} is not in "
                f"[0, {n})")

    effects.check(ok, message, data=(indices,))


def dropping(indices, limits):
    """Indices with every negative entry moved past its limit, so scatters drop them
    (JAX would otherwise wrap negative indices around)."""
    # indices.dtype, not np.asarray(indices): traced indices have no numpy value.
    dtype = indices.dtype if hasattr(indices, "dtype") else np.asarray(indices).dtype
    limits = np.asarray(limits).astype(dtype)
    return jnp.where(indices < 0, limits, indices)


def is_traced(value):
    return isinstance(value, jax.core.Tracer)
