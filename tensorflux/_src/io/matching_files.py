"""tf.io.matching_files / tf.matching_files: the MatchingFiles host record, a glob at
run time (TF's Env::GetMatchingPaths: `*` and `?` stay within one path component, `[...]`
classes; hidden files match too). The names of every pattern are joined and sorted
together; a pattern matching nothing adds nothing.
"""

from __future__ import annotations

import glob

import numpy as np

from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import dims_str, kernel_error
from tensorflux._src.ops.registry import OpDef, register

__all__ = ["matching_files"]


def _text(value):
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def _matching_files_kernel(pattern):
    patterns = np.asarray(pattern, object)
    if patterns.ndim > 1:
        raise kernel_error(f"Input pattern tensor must be scalar or vector, but had shape: "
                           f"{dims_str(patterns.shape)}")
    names = []
    for p in patterns.reshape(-1):
        names += glob.glob(_text(p), include_hidden=True)
    out = np.empty(len(names), object)
    out[:] = sorted(n.encode("utf-8") for n in names)
    return out


def _matching_files_shape(op):
    shape = op.inputs[0].shape
    if shape.ndims is not None and shape.ndims > 1:
        raise ValueError(f"Shape must be at most rank 1 but is rank {shape.ndims}")
    return TensorShape([None])


# Stateful: the files on disk change between runs, so the op is never folded or cached.
register(OpDef("MatchingFiles", inputs=("pattern: string",), outputs=("filenames: string",),
               shape=_matching_files_shape, host=_matching_files_kernel, stateful=True,
               not_differentiable=True))


def matching_files(pattern, name=None):
    """The sorted names of the files matching the glob `pattern` (a string or a vector
    of them), found when the op runs."""
    return apply_op("MatchingFiles", name=name, pattern=pattern)
